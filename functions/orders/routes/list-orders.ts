import { validate } from '#domain/validation.ts';
import { isRefused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { validationFailed } from '#domain/errors.ts';
import { ListOrdersQuery } from '#domain/order/list-query.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { onlyKnownParameters } from '#http/known-parameters.ts';
import { listOrders as listOrdersOfStore } from '#app/orders.ts';
import { parseUpdatedSince } from '#domain/order/updated-since.ts';

const KNOWN = ['cursor', 'limit', 'updated_since'];

/** GET /orders: ascending id from `cursor`, optionally only orders updated at or after `updated_since`. */
export const listOrders: RouteFn = async (ctx, { principal, query }) => {
  // A misspelt parameter (`updated_after`) would silently widen a sync to the whole store.
  onlyKnownParameters(query, KNOWN);
  const q = validate(ListOrdersQuery, query);
  if (isRefused(q)) return problemResult(q);
  let since: string | undefined;
  if (q.updated_since !== undefined) {
    const parsed = parseUpdatedSince(q.updated_since);
    if (!parsed.ok) throw validationFailed('updated_since', parsed.message);
    since = parsed.value;
  }
  return { body: await listOrdersOfStore(ctx, principal, { cursor: q.cursor, limit: q.limit, since }) };
};
