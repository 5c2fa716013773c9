import type { KeyedOperation } from '../../shared/http/api-routes.ts';
import type { RouteFn } from '../../shared/http/http-handler.ts';
import { operations as products } from '../products/handler.ts';
import { operations as catalog } from '../catalog/handler.ts';
import { operations as orders } from '../orders/handler.ts';
import { operations as content } from '../content/handler.ts';

/**
 * The route functions of every operation a key's ability gates, by operation name: a tool calls
 * the very function its endpoint does. Exhaustive over the route table, so an endpoint without
 * its function here does not compile.
 */
export const OPERATIONS: Readonly<Record<KeyedOperation, RouteFn>> = { ...products, ...catalog, ...orders, ...content };
