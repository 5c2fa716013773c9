import * as v from 'valibot';
import { intString, parse } from '../../../shared/domain/validation.ts';
import { DomainError } from '../../../shared/domain/errors.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import { listOrdersAfter, listOrdersUpdatedSince } from '../../../shared/db/order.repo.ts';
import { toOrderResource } from '../../../shared/domain/order/order.ts';
import { parseUpdatedSince } from '../../../shared/domain/order/updated-since.ts';

const KNOWN = ['cursor', 'limit', 'updated_since'];

const Query = v.object({
  cursor: v.optional(intString(0, Number.MAX_SAFE_INTEGER), '0'),
  limit: v.optional(intString(1, 50), '15'),
  updated_since: v.optional(v.string()),
});

/**
 * GET /orders: ascending id from `cursor`, optionally only orders updated at or after
 * `updated_since`. `next_cursor` is the last id of a full page when another order follows.
 */
export const listOrders: RouteFn = async ({ principal, query }) => {
  // A misspelt parameter (`updated_after`) would silently widen a sync to the whole store.
  const unknown = Object.keys(query).find((k) => !KNOWN.includes(k));
  if (unknown) throw new DomainError('validation_failed', `${unknown} is not a known parameter (${KNOWN.join(', ')})`, unknown);
  const q = parse(Query, query);
  let since: string | undefined;
  if (q.updated_since !== undefined) {
    const parsed = parseUpdatedSince(q.updated_since);
    if (!parsed.ok) throw new DomainError('validation_failed', parsed.message, 'updated_since');
    since = parsed.value;
  }
  const page =
    since === undefined
      ? await listOrdersAfter(principal.storeId, q.cursor, q.limit)
      : await listOrdersUpdatedSince(principal.storeId, since, q.cursor, q.limit);
  const last = page.orders.at(-1);
  return {
    body: {
      data: page.orders.map(toOrderResource),
      next_cursor: page.more && last ? last.id : null,
    },
  };
};
