import type { RequestContext } from '#shared/context.ts';
import {
  insertOrder,
  nextOrderId,
  listOrdersAfter,
  listOrdersUpdatedSince,
  readOrderByReference,
} from '#db/order/repo.ts';
import { commitOrderChange } from '#db/order/change.repo.ts';
import { computeTotals, toOrderResource, type Order, type OrderItem, type OrderStatus } from '#domain/order/order.ts';
import { decideMarkPaid, decideStatusChange, orderNotFound, withPayment, withStatus } from '#domain/order/rules.ts';
import { keyOrigin } from '#domain/event/event.ts';
import { buildCreatedEvent, buildPaidEvent, buildStatusChangedEvent, type OrderEvent } from '#domain/order/events.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import { nextUpdatedAt } from '#domain/time.ts';
import { done, retryOnStale, stale } from './contention.ts';
import type { Caller } from '#domain/principal.ts';
import { requireStore } from './stores.ts';
import { sendExpressMessage } from '#queue/sqs.ts';
import { errorFields, log } from '#shared/log.ts';
import {
  afterTaken,
  answered,
  checkRecord,
  prepareAnswer,
  type Idempotent,
  type IdempotencyCheck,
  type IdempotentRequest,
} from './idempotent-commit.ts';

/**
 * After an order write commits: asks the express lane to number and fan out its event now, ahead
 * of a catalog import's backlog in the table stream (./express-events.ts). Never fails the write:
 * without the lane, the stream delivers the event as it always did.
 */
async function expedite(event: OrderEvent): Promise<void> {
  try {
    await sendExpressMessage(
      { store_id: event.store_id, event_id: event.event_id, follows: event.follows },
      AbortSignal.timeout(2000),
    );
  } catch (err) {
    log('warn', 'order event not expedited; the table stream delivers it', {
      event_id: event.event_id,
      ...errorFields(err),
    });
  }
}

export type OrderDocument = { data: ReturnType<typeof toOrderResource> };

/**
 * An order's status moved by an integration (docs/contract.md#orders): one BatchGetItem reads the order (by
 * its reference) and the request's idempotency record, the record is checked (a replay, a reused
 * key or a twin in progress is the result), the state machine decides, and the change, its outbox
 * event and the stored idempotent answer commit in one transaction guarded on the order as it was
 * read. Racing requests each decide again from what the winner wrote, so ten racing requests give
 * one change and one event.
 */
export function changeOrderStatus(
  ctx: RequestContext,
  caller: Caller,
  reference: string,
  status: OrderStatus,
  request: IdempotentRequest,
): Promise<Idempotent<OrderDocument> | Refused> {
  type Read = { order: Order | undefined; check: IdempotencyCheck };
  return retryOnStale<Read, Idempotent<OrderDocument> | Refused>({
    budget: ctx,
    what: `order ${reference} of store ${caller.storeId}`,
    maxAttempts: 5,
    read: async () => {
      const read = await readOrderByReference(ctx, caller.storeId, reference, request.recordKey);
      return { order: read.order, check: checkRecord(request, read.alongside) };
    },
    round: async ({ order, check }) => {
      if (check.kind !== 'fresh') return done(check);
      if (!order) return done(orderNotFound());
      const decision = decideStatusChange(order.status, status);
      if (decision.kind === 'noop') return done(answered({ data: toOrderResource(order) }));
      if (decision.kind === 'forbidden')
        return done(
          refused('invalid_transition', `An order cannot move from ${decision.from} to ${decision.to}.`, 'status'),
        );
      const now = nextUpdatedAt(order.updated_at);
      const next = withStatus(order, status, now);
      const document = { data: toOrderResource(next) };
      const prepared = prepareAnswer(request, { body: document });
      // A dry run writes nothing and asks the express lane for nothing.
      if (ctx.dryRun) return done(answered(document, prepared.response));
      const event = buildStatusChangedEvent(next, order, now, keyOrigin(caller.keyId));
      const commit = await commitOrderChange(ctx, order, next, event, [prepared.write]);
      if (commit.kind === 'committed') {
        await expedite(event);
        return done(answered(document, prepared.response));
      }
      if (commit.kind === 'guard_failed') return done(await afterTaken(ctx, request, commit.busy));
      return stale(commit.kind === 'stale' ? { order: commit.current, check } : undefined);
    },
  });
}

/**
 * The payment side (`orders mark-paid`): a pending order becomes paid with its whole total.
 * A payment confirmation arrives more than once; the second one finds the order paid (no-op, no
 * event). The payment and its `order.paid` event commit together.
 */
export async function markOrderPaid(
  ctx: RequestContext,
  storeId: string,
  reference: string,
): Promise<OrderDocument['data'] | Refused> {
  const store = await requireStore(ctx, storeId);
  if (isRefused(store)) return store;
  return retryOnStale<Order | undefined, OrderDocument['data'] | Refused>({
    budget: ctx,
    what: `payment of order ${reference} of store ${storeId}`,
    maxAttempts: 5,
    read: async () => (await readOrderByReference(ctx, storeId, reference)).order,
    round: async (order) => {
      if (!order)
        return done(refused('not_found', `order "${reference}" does not exist in store "${storeId}"`, 'reference'));
      const decision = decideMarkPaid(order.status);
      if (decision.kind === 'noop') return done(toOrderResource(order));
      if (decision.kind === 'forbidden')
        return done(
          refused(
            'invalid_transition',
            `order "${reference}" is ${order.status}; only a pending order can be marked paid`,
            'reference',
          ),
        );
      const next = withPayment(order, nextUpdatedAt(order.updated_at));
      const event = buildPaidEvent(next, order);
      const commit = await commitOrderChange(ctx, order, next, event);
      if (commit.kind === 'committed') {
        await expedite(event);
        return done(toOrderResource(next));
      }
      // The order moved between our read and our write: decide again from what it is now.
      return stale(commit.kind === 'stale' ? commit.current : undefined);
    },
  });
}

export interface OrderPlacement {
  reference: string;
  status: Extract<OrderStatus, 'pending' | 'paid'>;
  currency_code?: string | undefined;
  customer: Order['customer'];
  items: Omit<OrderItem, 'total'>[];
  shipping_total: number;
  discount_total: number;
  /** Default: the whole total for a paid order, nothing for a pending one. */
  paid_total?: number | undefined;
}

/**
 * The storefront's side (`orders place`): subtotal and total are computed, never taken. The order
 * and its `order.created` event commit together (an order placed already paid is one
 * `order.created`, whose order says `paid`).
 */
export async function placeOrder(
  ctx: RequestContext,
  storeId: string,
  placement: OrderPlacement,
): Promise<OrderDocument['data'] | Refused> {
  const store = await requireStore(ctx, storeId);
  if (isRefused(store)) return store;
  const totals = computeTotals(placement.items, placement.shipping_total, placement.discount_total);
  const now = new Date().toISOString();
  const order: Order = {
    id: await nextOrderId(ctx, store.id),
    store_id: store.id,
    reference: placement.reference,
    status: placement.status,
    currency_code: placement.currency_code ?? store.currency_code,
    customer: placement.customer,
    items: totals.items,
    subtotal: totals.subtotal,
    shipping_total: placement.shipping_total,
    discount_total: placement.discount_total,
    total: totals.total,
    paid_total: placement.paid_total ?? (placement.status === 'paid' ? totals.total : 0),
    created_at: now,
    updated_at: now,
  };
  const event = buildCreatedEvent(order);
  const inserted = await insertOrder(ctx, order, event);
  if (inserted.kind === 'reference_taken')
    return refused('conflict', `an order with reference "${order.reference}" already exists`, 'reference');
  await expedite(event);
  return toOrderResource(order);
}

export interface OrderListDocument {
  data: OrderDocument['data'][];
  next_cursor: number | null;
}

/** Ascending id from `cursor`, optionally only orders updated at or after `since`; `next_cursor` is the last id of a full page. */
export async function listOrders(
  ctx: RequestContext,
  caller: Caller,
  params: { cursor: number; limit: number; since: string | undefined },
): Promise<OrderListDocument> {
  const page =
    params.since === undefined
      ? await listOrdersAfter(ctx, caller.storeId, params.cursor, params.limit)
      : await listOrdersUpdatedSince(ctx, caller.storeId, params.since, params.cursor, params.limit);
  const last = page.orders.at(-1);
  return { data: page.orders.map(toOrderResource), next_cursor: page.more && last ? last.id : null };
}

/** A dry run's "before" (docs/api.md#dry-runs): the order as a status change answers it. */
export async function currentOrder(ctx: RequestContext, caller: Caller, reference: string) {
  const { order } = await readOrderByReference(ctx, caller.storeId, reference);
  return order && toOrderResource(order);
}
