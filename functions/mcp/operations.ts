import type { API_ROUTES, KeyedOperation } from '#http/api-routes.ts';
import type { RouteFn } from '#http/http-handler.ts';
import type { Ability } from '#domain/key/abilities.ts';
import type { CurrentStates } from '#http/dry-run.ts';
import { operations as products } from '#functions/products/handler.ts';
import { currentStates as catalogStates, operations as catalog } from '#functions/catalog/handler.ts';
import { currentStates as orderStates, operations as orders } from '#functions/orders/handler.ts';
import { currentStates as contentStates, operations as content } from '#functions/content/handler.ts';

/** The operations open to a key holding any one of several abilities (GET /events): also tools. */
export type AnyOfOperation = Extract<(typeof API_ROUTES)[number], { anyOf: readonly Ability[] }>['operation'];
/** Every operation that is an MCP tool. */
export type ToolOperation = KeyedOperation | AnyOfOperation;

/**
 * The route functions of every operation a key's abilities gate, by operation name: a tool calls
 * the very function its endpoint does. Exhaustive over the route table, so an endpoint without
 * its function here does not compile.
 */
export const OPERATIONS: Readonly<Record<ToolOperation, RouteFn>> = { ...products, ...catalog, ...orders, ...content };

/** Every write's dry-run reader, from the group that owns the write. */
export const CURRENT_STATES: CurrentStates = { ...catalogStates, ...orderStates, ...contentStates };
