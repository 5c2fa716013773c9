import { validate } from '#domain/validation.ts';
import { isRefused, refused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { ListOrdersQuery } from '#domain/order/list-query.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { unknownParameter } from '#http/known-parameters.ts';
import { listOrders as listOrdersOfStore } from '#app/orders.ts';
import { parseUpdatedSince } from '#domain/order/updated-since.ts';

const KNOWN = ['cursor', 'limit', 'updated_since'];

/** GET /orders: ascending id from `cursor`, optionally only orders updated at or after `updated_since`. */
export const listOrders: RouteFn = async (ctx, { principal, query }) => {
  // A misspelt parameter (`updated_after`) would silently widen a sync to the whole store.
  const unknown = unknownParameter(query, KNOWN);
  if (unknown) return problemResult(unknown);
  const q = validate(ListOrdersQuery, query);
  if (isRefused(q)) return problemResult(q);
  let since: string | undefined;
  if (q.updated_since !== undefined) {
    const parsed = parseUpdatedSince(q.updated_since);
    if (!parsed.ok) return problemResult(refused('validation_failed', parsed.message, 'updated_since'));
    since = parsed.value;
  }
  return { body: await listOrdersOfStore(ctx, principal, { cursor: q.cursor, limit: q.limit, since }) };
};
