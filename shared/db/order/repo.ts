import type { RequestContext } from '#shared/context.ts';
import { eventPut } from '../event/item.ts';
import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { keys, type Key } from '../keys.ts';
import { getWithAlongside, type Item, namedTransaction } from '../core/helpers.ts';
import type { Order } from '#domain/order/order.ts';
import type { OrderEvent } from '#domain/order/events.ts';
import { nextInSequence } from '../core/sequence.ts';

export function toOrder(item: Item): Order {
  return {
    id: item.id,
    store_id: item.store_id,
    reference: item.reference,
    status: item.status,
    currency_code: item.currency_code,
    customer: { name: item.customer.name, email: item.customer.email, phone: item.customer.phone ?? null },
    // Field by field, in the contract's order: DynamoDB keeps no key order inside a map.
    items: (item.items as Item[]).map((i) => ({
      product_id: i.product_id ?? null,
      offer_id: i.offer_id ?? null,
      sku: i.sku ?? null,
      name: i.name,
      quantity: i.quantity,
      price: i.price,
      total: i.total,
    })),
    subtotal: item.subtotal,
    shipping_total: item.shipping_total,
    discount_total: item.discount_total,
    total: item.total,
    paid_total: item.paid_total,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

export function orderItem(o: Order): Item {
  return {
    ...keys.order(o.store_id, o.id),
    ...keys.orderUpdateIndex(o.store_id, o.updated_at, o.id),
    type: ENTITY.order,
    ...o,
  };
}

/**
 * The reference item: the whole order (without the index keys, so it is not listed twice), so a
 * write addressed by reference reads one item. The order item stays canonical (lists, the
 * updated-since index); every order write puts this copy in the same transaction and is guarded
 * on the order item's `updated_at`, which every write moves, so a copy that ever fell behind
 * fails that guard and the next round decides from the order item itself. `order_id` is kept for
 * readers of the reference-only form written before the copy existed.
 */
export function orderRefItem(o: Order): Item {
  return { ...keys.orderRef(o.store_id, o.reference), type: ENTITY.orderRef, order_id: o.id, ...o };
}

/** A reference item written before it carried the order holds only `order_id`. */
const carriesOrder = (item: Item) => item.status !== undefined;

/** The id of a new order of the store: one atomic ADD (ids ascend; a failed insert leaves a gap, and order lists are cursor-based). */
export const nextOrderId = (ctx: RequestContext, storeId: string): Promise<number> =>
  nextInSequence(ctx, keys.sequence(storeId, 'order'));

/** How an insert ended: the order written, or its reference already names an order of the store (nothing written). */
export type InsertOrderOutcome = { kind: 'inserted'; order: Order } | { kind: 'reference_taken' };

/**
 * The storefront's side: a new order (its id from `nextOrderId`), its reference map and, given
 * one, the `order.created` event the use case raised, together; a reference is unique per store.
 */
export async function insertOrder(ctx: RequestContext, order: Order, event?: OrderEvent): Promise<InsertOrderOutcome> {
  const tx = namedTransaction([
    [
      'order',
      { Put: { TableName: tableName(), Item: orderItem(order), ConditionExpression: 'attribute_not_exists(pk)' } },
    ],
    [
      'reference',
      { Put: { TableName: tableName(), Item: orderRefItem(order), ConditionExpression: 'attribute_not_exists(pk)' } },
    ],
    ['event', event && eventPut(event)],
  ]);
  try {
    await send(ctx, new TransactWriteCommand({ TransactItems: tx.items, ClientRequestToken: randomUUID() }));
  } catch (err) {
    if (tx.cancelledBy(err)?.failed('reference')) return { kind: 'reference_taken' };
    throw err;
  }
  return { kind: 'inserted', order };
}

// ---- reads -------------------------------------------------------------------------------

export async function getOrder(ctx: RequestContext, storeId: string, id: number): Promise<Order | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.order(storeId, id), ConsistentRead: true }),
  );
  return out.Item ? toOrder(out.Item) : undefined;
}

/**
 * The order a reference names, from the reference item's copy: one consistent read, which also
 * reads `alongside` (the request's idempotency record) in the same BatchGetItem. A reference item
 * from before the copy costs a second read of the order item (the next write adds the copy).
 */
export async function readOrderByReference(
  ctx: RequestContext,
  storeId: string,
  reference: string,
  alongside?: Key,
): Promise<{ order: Order | undefined; alongside: Item | undefined }> {
  const { item: ref, alongside: other } = await getWithAlongside(ctx, keys.orderRef(storeId, reference), alongside);
  if (!ref) return { order: undefined, alongside: other };
  return {
    order: carriesOrder(ref) ? toOrder(ref) : await getOrder(ctx, storeId, Number(ref.order_id)),
    alongside: other,
  };
}

/** Ids are 12-digit padded in the sort key. */
export const MAX_ORDER_ID = 999_999_999_999;

export interface OrderPage {
  orders: Order[];
  /** True when at least one more order matches after the last one returned. */
  more: boolean;
}

/**
 * Orders with id > cursor, ascending: one Query on the store's partition from the cursor's sort
 * key, reading `limit + 1` orders (the one extra tells whether another page exists).
 */
export async function listOrdersAfter(
  ctx: RequestContext,
  storeId: string,
  cursor: number,
  limit: number,
): Promise<OrderPage> {
  return walkOrders(ctx, storeId, cursor, limit);
}

/**
 * How many index entries the "updated since" probe may read before the changed set counts as
 * large. Up to it (the regular poll: what changed since the last sync), the whole changed set
 * comes from the index in one Query and is sorted by id here. Beyond it, the main partition is
 * walked by id from the cursor with a filter, which reads about a page's worth when most orders
 * match and is strongly consistent; the probe then costs at most this many entries extra.
 */
export const UPDATED_SINCE_PROBE_LIMIT = 100;

/**
 * Orders with updated_at >= since and id > cursor, ascending by id. The set of matching orders
 * only grows while a client walks it (updated_at never goes back), so walking by id neither
 * skips nor repeats an order that matched when the walk began.
 */
export async function listOrdersUpdatedSince(
  ctx: RequestContext,
  storeId: string,
  since: string,
  cursor: number,
  limit: number,
): Promise<OrderPage> {
  if (cursor >= MAX_ORDER_ID) return { orders: [], more: false };
  const out = await send(
    ctx,
    new QueryCommand({
      TableName: tableName(),
      IndexName: TABLE.gsi1.indexName,
      KeyConditionExpression: '#gpk = :gpk AND #gsk >= :since',
      FilterExpression: '#id > :cursor',
      ExpressionAttributeNames: { '#gpk': TABLE.gsi1.partitionKey, '#gsk': TABLE.gsi1.sortKey, '#id': 'id' },
      ExpressionAttributeValues: { ':gpk': keys.orderUpdatePartition(storeId), ':since': since, ':cursor': cursor },
      Limit: UPDATED_SINCE_PROBE_LIMIT,
    }),
  );
  if (out.LastEvaluatedKey) {
    // The probe's matches bound the walk: the (limit+1)-th smallest id among them has at least
    // limit + 1 matching orders at or below it, so the walk never needs to read past it.
    const probed = (out.Items ?? []).map((i) => Number(i.id)).sort((a, b) => a - b);
    return walkOrders(ctx, storeId, cursor, limit, { since, upTo: probed[limit] });
  }
  // An index entry may briefly exist twice while an update propagates; the newest copy wins.
  const byId = new Map<number, Order>();
  for (const item of out.Items ?? []) {
    const order = toOrder(item);
    const seen = byId.get(order.id);
    if (!seen || seen.updated_at < order.updated_at) byId.set(order.id, order);
  }
  const sorted = [...byId.values()].sort((a, b) => a.id - b.id);
  return { orders: sorted.slice(0, limit), more: sorted.length > limit };
}

/**
 * The main partition from the cursor, ascending, until `limit + 1` orders matched. Without a
 * filter that is one Query of `limit + 1` items. With `since`, each further Query reads twice as
 * many as the one before (so a sparse match costs few round trips and a dense one reads little
 * more than it returns), never past `upTo`, and eventually consistent like the index it stands
 * in for: a change younger than a second may show on the next poll instead of this one.
 */
async function walkOrders(
  ctx: RequestContext,
  storeId: string,
  cursor: number,
  limit: number,
  filter?: { since: string; upTo: number | undefined },
): Promise<OrderPage> {
  if (cursor >= MAX_ORDER_ID) return { orders: [], more: false };
  const found: Order[] = [];
  let start: Item | undefined;
  let batch = limit + 1;
  do {
    const out = await send(
      ctx,
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ...(filter ? { FilterExpression: 'updated_at >= :since' } : {}),
        ExpressionAttributeValues: {
          ':pk': keys.order(storeId, 0).pk,
          ':from': keys.order(storeId, cursor + 1).sk,
          ':to': keys.order(storeId, filter?.upTo ?? MAX_ORDER_ID).sk,
          ...(filter ? { ':since': filter.since } : {}),
        },
        ExclusiveStartKey: start,
        Limit: batch,
        ConsistentRead: !filter,
      }),
    );
    for (const item of out.Items ?? []) found.push(toOrder(item));
    start = out.LastEvaluatedKey;
    batch = Math.min(batch * 2, 1000);
  } while (start && found.length <= limit);
  return { orders: found.slice(0, limit), more: found.length > limit };
}
