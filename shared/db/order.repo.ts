import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY, TABLE } from './table.ts';
import { keys } from './keys.ts';
import { cancellationReasons, itemFromError, type Item, type TransactItem } from './helpers.ts';
import type { Order } from '../domain/order/order.ts';
import type { OrderEvent } from '../domain/order/events.ts';
import { DomainError } from '../domain/errors.ts';
import { nextInSequence } from './sequence.ts';

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
  return { ...keys.order(o.store_id, o.id), ...keys.orderUpdateIndex(o.store_id, o.updated_at, o.id), type: ENTITY.order, ...o };
}

const nextOrderId = (storeId: string) => nextInSequence(keys.sequence(storeId, 'order'));

/**
 * The storefront's side: a new order, its reference map and (given `eventOf`) its `order.created`
 * outbox event, together; a reference is unique per store. The event needs the order's id, so
 * the caller passes how to build it rather than the event itself.
 */
export async function insertOrder(draft: Omit<Order, 'id'>, eventOf?: (order: Order) => OrderEvent): Promise<Order> {
  const order: Order = { ...draft, id: await nextOrderId(draft.store_id) };
  const event = eventOf?.(order);
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName(), Item: orderItem(order), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.orderRef(order.store_id, order.reference), type: ENTITY.orderRef, order_id: order.id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          ...(event ? [{ Put: { TableName: tableName(), Item: outboxItem(event), ConditionExpression: 'attribute_not_exists(pk)' } }] : []),
        ],
        ClientRequestToken: randomUUID(),
      }),
    );
  } catch (err) {
    if (cancellationReasons(err)?.[1]?.Code === 'ConditionalCheckFailed') {
      throw new DomainError('conflict', `an order with reference "${order.reference}" already exists`, 'reference');
    }
    throw err;
  }
  return order;
}

// ---- reads -------------------------------------------------------------------------------

export async function getOrder(storeId: string, id: number): Promise<Order | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.order(storeId, id), ConsistentRead: true }));
  return out.Item ? toOrder(out.Item) : undefined;
}

/** Two consistent reads: the reference map names the id, the id names the order. */
export async function getOrderByReference(storeId: string, reference: string): Promise<Order | undefined> {
  const ref = await db().send(new GetCommand({ TableName: tableName(), Key: keys.orderRef(storeId, reference), ConsistentRead: true }));
  if (!ref.Item) return undefined;
  return getOrder(storeId, Number(ref.Item.order_id));
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
export async function listOrdersAfter(storeId: string, cursor: number, limit: number): Promise<OrderPage> {
  return walkOrders(storeId, cursor, limit);
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
export async function listOrdersUpdatedSince(storeId: string, since: string, cursor: number, limit: number): Promise<OrderPage> {
  if (cursor >= MAX_ORDER_ID) return { orders: [], more: false };
  const out = await db().send(
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
    return walkOrders(storeId, cursor, limit, { since, upTo: probed[limit] });
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
async function walkOrders(storeId: string, cursor: number, limit: number, filter?: { since: string; upTo: number | undefined }): Promise<OrderPage> {
  if (cursor >= MAX_ORDER_ID) return { orders: [], more: false };
  const found: Order[] = [];
  let start: Item | undefined;
  let batch = limit + 1;
  do {
    const out = await db().send(
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

// ---- status changes ------------------------------------------------------------------------

export function outboxItem(event: OrderEvent): Item {
  return { ...keys.outboxEvent(event.store_id, event.event_id), type: ENTITY.outbox, ...event };
}

export type StatusCommit =
  | { kind: 'committed' }
  /** The order's status was no longer `previous.status`; `current` is what it is now (if known). */
  | { kind: 'stale'; current: Order | undefined }
  /** One of the caller's guarded writes (`with`) failed its condition. */
  | { kind: 'guard_failed' }
  /** Another transaction held one of the items; nothing was written, try again. */
  | { kind: 'conflict' };

/**
 * The status change, its outbox event and the caller's own writes (the idempotency record) in
 * one TransactWriteItems, guarded on the status the change was decided from: of any number of
 * racing requests, only one can move the order away from that status.
 */
export async function commitStatusChange(previous: Order, next: Order, event: OrderEvent, withWrites: TransactItem[] = []): Promise<StatusCommit> {
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.order(next.store_id, next.id),
              UpdateExpression: 'SET #status = :to, updated_at = :now, #gsk = :gsk',
              ConditionExpression: '#status = :from',
              ExpressionAttributeNames: { '#status': 'status', '#gsk': TABLE.gsi1.sortKey },
              ExpressionAttributeValues: {
                ':from': previous.status,
                ':to': next.status,
                ':now': next.updated_at,
                ':gsk': keys.orderUpdateIndex(next.store_id, next.updated_at, next.id).gsi1sk,
              },
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
            },
          },
          { Put: { TableName: tableName(), Item: outboxItem(event), ConditionExpression: 'attribute_not_exists(pk)' } },
          ...withWrites,
        ],
        // The SDK retries a call whose answer was lost; the token makes that retry a no-op, not a failure.
        ClientRequestToken: randomUUID(),
      }),
    );
    return { kind: 'committed' };
  } catch (err) {
    const reasons = cancellationReasons(err);
    if (!reasons) throw err;
    if (reasons.slice(2).some((r) => r.Code === 'ConditionalCheckFailed')) return { kind: 'guard_failed' };
    const orderReason = reasons[0];
    if (orderReason?.Code === 'ConditionalCheckFailed') {
      const old = itemFromError(orderReason.Item);
      return { kind: 'stale', current: old ? toOrder(old) : undefined };
    }
    return { kind: 'conflict' };
  }
}

/**
 * The payment side: the order becomes paid and its paid total the whole total, with its
 * `order.paid` outbox event in the same transaction, guarded on the status the decision was made
 * from. Returns undefined when that status had changed meanwhile (or another transaction held
 * the order): decide again.
 */
export async function commitPayment(previous: Order, next: Order, event: OrderEvent): Promise<Order | undefined> {
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.order(next.store_id, next.id),
              UpdateExpression: 'SET #status = :to, paid_total = :paid, updated_at = :now, #gsk = :gsk',
              ConditionExpression: '#status = :from',
              ExpressionAttributeNames: { '#status': 'status', '#gsk': TABLE.gsi1.sortKey },
              ExpressionAttributeValues: {
                ':from': previous.status,
                ':to': next.status,
                ':paid': next.paid_total,
                ':now': next.updated_at,
                ':gsk': keys.orderUpdateIndex(next.store_id, next.updated_at, next.id).gsi1sk,
              },
            },
          },
          { Put: { TableName: tableName(), Item: outboxItem(event), ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
        ClientRequestToken: randomUUID(),
      }),
    );
    return next;
  } catch (err) {
    if (cancellationReasons(err)) return undefined;
    throw err;
  }
}
