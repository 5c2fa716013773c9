import { describe, expect, it } from 'vitest';
import {
  changeOrderStatus,
  idempotentRequest,
  listOrders,
  markOrderPaid,
  newStore,
  orderIn,
  outcome,
  placeTestOrder,
  putIdempotencyRecord,
  raisedEvents,
  storeWithCaller,
  unique,
  type TestCaller,
} from '#fixtures/usecase.ts';
import { ORDER_STATUSES, ORDER_TRANSITIONS, type OrderStatus } from '#domain/order/order.ts';
import { SETTABLE_STATUSES } from '#domain/order/status-change.ts';
import { requestFingerprint } from '#domain/idempotency.ts';

/**
 * The order use cases (shared/app/orders.ts) called in-process: an integration's status moves under
 * an Idempotency-Key (the state machine, replays, records in odd states, racing requests) and the
 * payment side's mark-paid. What the route answers for each outcome (200 with the order, 409, 422,
 * Retry-After, the replayed bytes) is test/integration/orders-status.test.ts's and
 * orders-idempotency.test.ts's.
 */
const path = (reference: string) => `/orders/${reference}/status`;

/** A status move of `reference` under `key` (a fresh Idempotency-Key by default). */
function move(caller: TestCaller, reference: string, status: OrderStatus, key?: string) {
  const request = idempotentRequest(caller, path(reference), { status }, { key });
  return outcome(changeOrderStatus(caller, reference, status, request));
}

const eventsOf = async (storeId: string, orderId: number) =>
  (await raisedEvents(storeId, 'order.status_changed')).filter((e) => e.payload.data.order.id === orderId);

const mover = () => storeWithCaller(['orders:read', 'orders:write-status']);

describe('changeOrderStatus: the state machine', () => {
  it('makes every allowed move with one event, answers the current status as a no-op, and refuses every other move writing nothing', async () => {
    const { storeId, caller } = await mover();
    // Each cell on an order of its own. The orders are placed one after another (side by side,
    // their inserts would contend for the store's order id), then moved side by side.
    const placed = [];
    for (const from of ORDER_STATUSES)
      for (const to of SETTABLE_STATUSES) placed.push({ from, to, order: await orderIn(storeId, from) });
    const cells = await Promise.all(
      placed.map(async (cell) => ({ ...cell, answer: await move(caller, cell.order.reference, cell.to) })),
    );
    const events = await raisedEvents(storeId, 'order.status_changed');
    for (const { from, to, order, answer } of cells) {
      const cell = `${from} → ${to}`;
      const raised = events.filter((e) => e.payload.data.order.id === order.id);
      if (to === from) {
        expect(answer, cell).toMatchObject({
          kind: 'answered',
          answer: { data: { id: order.id, status: from, updated_at: order.updated_at } },
          stored: undefined,
        });
        expect(raised, cell).toHaveLength(0);
      } else if (ORDER_TRANSITIONS[from].includes(to)) {
        expect(answer, cell).toMatchObject({
          kind: 'answered',
          answer: { data: { id: order.id, status: to, paid_total: order.paid_total, total: order.total } },
        });
        if (answer.kind === 'answered') expect(answer.answer.data.updated_at > order.updated_at, cell).toBe(true);
        expect(raised, cell).toHaveLength(1);
        expect(raised[0]?.payload.data, cell).toMatchObject({ previous_status: from, status: to });
      } else {
        expect(answer, cell).toMatchObject({ kind: 'refused', code: 'invalid_transition', field: 'status' });
        if (answer.kind === 'refused') expect(answer.message, cell).toContain(from);
        expect(raised, cell).toHaveLength(0);
      }
    }
  });

  it('never changes paid_total, through a whole life cycle', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'paid', 1234);
    for (const status of ['processing', 'shipped', 'delivered', 'returned'] as const)
      expect(await move(caller, order.reference, status)).toMatchObject({
        kind: 'answered',
        answer: { data: { status, paid_total: 1234, total: order.total } },
      });
    expect(await eventsOf(storeId, order.id)).toHaveLength(4);
  });

  it("finds neither an unknown reference nor another store's order", async () => {
    const { storeId, caller } = await mover();
    const { caller: other } = await mover();
    const order = await orderIn(storeId, 'pending');
    expect(await move(caller, unique('NOPE'), 'processing')).toMatchObject({ kind: 'refused', code: 'not_found' });
    expect(await move(other, order.reference, 'processing')).toMatchObject({ kind: 'refused', code: 'not_found' });
    expect(await eventsOf(storeId, order.id)).toHaveLength(0);
  });
});

describe('changeOrderStatus: the Idempotency-Key', () => {
  it('replays the first answer even after the order moved on, and refuses the key with another body', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'pending');
    const key = unique('k');
    const first = await move(caller, order.reference, 'processing', key);
    expect(first).toMatchObject({ kind: 'answered', stored: { status: 200 } });
    expect(await move(caller, order.reference, 'shipped')).toMatchObject({ kind: 'answered' });
    const again = await move(caller, order.reference, 'processing', key);
    expect(again).toEqual({ kind: 'replay', response: first.kind === 'answered' ? first.stored : undefined });
    expect(await move(caller, order.reference, 'cancelled', key)).toEqual({ kind: 'reused' });
    expect(await eventsOf(storeId, order.id)).toHaveLength(2);
  });

  it('answers in_progress while a request of the previous version holds the key, also to another body', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'pending');
    const key = unique('k');
    const scope = { keyId: caller.keyId, method: 'POST', path: path(order.reference), key };
    await putIdempotencyRecord(scope, requestFingerprint({ status: 'processing' }));
    expect(await move(caller, order.reference, 'processing', key)).toEqual({ kind: 'in_progress' });
    // Another body under a held key is still a reuse.
    expect(await move(caller, order.reference, 'cancelled', key)).toEqual({ kind: 'reused' });
    expect(await eventsOf(storeId, order.id)).toHaveLength(0);
  });

  it('takes over a key whose holder (previous version) crashed once the 30 s lease has run out', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'pending');
    const key = unique('k');
    const scope = { keyId: caller.keyId, method: 'POST', path: path(order.reference), key };
    await putIdempotencyRecord(scope, requestFingerprint({ status: 'processing' }), { nowMs: Date.now() - 31_000 });
    const first = await move(caller, order.reference, 'processing', key);
    expect(first).toMatchObject({ kind: 'answered', answer: { data: { status: 'processing' } } });
    expect(await move(caller, order.reference, 'processing', key)).toEqual({
      kind: 'replay',
      response: first.kind === 'answered' ? first.stored : undefined,
    });
    expect(await eventsOf(storeId, order.id)).toHaveLength(1);
  });

  it('does not let another body take over an abandoned key', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'pending');
    const key = unique('k');
    const scope = { keyId: caller.keyId, method: 'POST', path: path(order.reference), key };
    await putIdempotencyRecord(scope, requestFingerprint({ status: 'processing' }), { nowMs: Date.now() - 31_000 });
    expect(await move(caller, order.reference, 'cancelled', key)).toEqual({ kind: 'reused' });
    expect(await eventsOf(storeId, order.id)).toHaveLength(0);
  });

  it('treats an expired record that TTL has not swept yet as absent', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'pending');
    const key = unique('k');
    const scope = { keyId: caller.keyId, method: 'POST', path: path(order.reference), key };
    // A finished request of 25 hours ago, with another body and another answer.
    await putIdempotencyRecord(scope, requestFingerprint({ status: 'cancelled' }), {
      nowMs: Date.now() - 25 * 3600 * 1000,
      completedWith: { status: 409, body: '{"code":"old"}' },
    });
    expect(await move(caller, order.reference, 'processing', key)).toMatchObject({
      kind: 'answered',
      answer: { data: { status: 'processing' } },
    });
  });
});

describe('changeOrderStatus: racing requests', () => {
  it('ten concurrent requests with different keys make exactly one change and one event', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'pending');
    const results = await Promise.all(Array.from({ length: 10 }, () => move(caller, order.reference, 'processing')));
    const data = results.map((r) => (r.kind === 'answered' ? r.answer.data : undefined));
    expect(data.every((d) => d?.status === 'processing')).toBe(true);
    // One of them made the change (a new updated_at); the others saw it done (no-ops with that same updated_at).
    expect(new Set(data.map((d) => d?.updated_at)).size).toBe(1);
    const events = await eventsOf(storeId, order.id);
    expect(events).toHaveLength(1);
    expect(events[0]?.payload.data).toMatchObject({ previous_status: 'pending', status: 'processing' });
  });

  it('ten concurrent requests with different targets: one change in all, and the losers refused as invalid moves', async () => {
    const { storeId, caller } = await mover();
    const order = await orderIn(storeId, 'processing');
    const targets = Array.from({ length: 10 }, (_, i) => (i % 2 ? 'cancelled' : 'shipped') as OrderStatus);
    const results = await Promise.all(targets.map((status) => move(caller, order.reference, status)));
    // From processing both moves are allowed; whichever wins, the other target is then
    // shipped → cancelled or cancelled → shipped, both forbidden: one change in all.
    const events = await eventsOf(storeId, order.id);
    expect(events).toHaveLength(1);
    const winner = events[0]?.payload.data.status;
    for (const [i, r] of results.entries()) {
      if (targets[i] === winner) expect(r).toMatchObject({ kind: 'answered', answer: { data: { status: winner } } });
      else expect(r).toMatchObject({ kind: 'refused', code: 'invalid_transition' });
    }
  });
});

describe('markOrderPaid and listOrders', () => {
  it('marks a pending order paid once, with its whole total and one order.paid event; a repeat is a no-op', async () => {
    const storeId = await newStore();
    const placed = await placeTestOrder(storeId);
    const paid = await markOrderPaid(storeId, placed.reference);
    expect(paid).toMatchObject({ status: 'paid', paid_total: placed.total });
    expect(paid.updated_at > placed.updated_at).toBe(true);
    expect(await markOrderPaid(storeId, placed.reference)).toEqual(paid);
    const events = (await raisedEvents(storeId, 'order.paid')).filter((e) => e.payload.data.order.id === placed.id);
    expect(events).toHaveLength(1);
  });

  it('refuses to mark paid an order past pending, and an unknown reference or store', async () => {
    const storeId = await newStore();
    const order = await orderIn(storeId, 'processing');
    expect(await outcome(markOrderPaid(storeId, order.reference))).toMatchObject({
      kind: 'refused',
      code: 'invalid_transition',
      field: 'reference',
    });
    expect(await outcome(markOrderPaid(storeId, unique('NOPE')))).toMatchObject({
      code: 'not_found',
      field: 'reference',
    });
    expect(await outcome(markOrderPaid(unique('nostore'), order.reference))).toMatchObject({
      code: 'not_found',
      field: 'store',
    });
  });

  it('walks the orders of the store once each, in ascending id, whatever the page size', async () => {
    const { storeId, caller } = await storeWithCaller(['orders:read']);
    const ids: number[] = [];
    for (let i = 0; i < 7; i++) ids.push((await orderIn(storeId, 'pending')).id);
    for (const limit of [1, 3, 7, 50]) {
      const seen: number[] = [];
      let cursor = 0;
      for (;;) {
        const page = await listOrders(caller, { cursor, limit, since: undefined });
        seen.push(...page.data.map((o) => o.id));
        if (page.next_cursor === null) break;
        cursor = page.next_cursor;
      }
      expect(seen, `limit ${limit}`).toEqual(ids);
    }
    const { caller: other } = await storeWithCaller(['orders:read']);
    expect(await listOrders(other, { cursor: 0, limit: 50, since: undefined })).toEqual({
      data: [],
      next_cursor: null,
    });
  });
});
