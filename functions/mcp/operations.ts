import type { KeyedOperation } from '#http/api-routes.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { operations as products } from '#functions/products/handler.ts';
import { operations as catalog } from '#functions/catalog/handler.ts';
import { operations as orders } from '#functions/orders/handler.ts';
import { operations as content } from '#functions/content/handler.ts';

/**
 * The route functions of every operation a key's ability gates, by operation name: a tool calls
 * the very function its endpoint does. Exhaustive over the route table, so an endpoint without
 * its function here does not compile.
 */
export const OPERATIONS: Readonly<Record<KeyedOperation, RouteFn>> = { ...products, ...catalog, ...orders, ...content };
