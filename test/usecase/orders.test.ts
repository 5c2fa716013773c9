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
    const order = await orderIn(storeId, 'paid', { paidTotal: 1234 });
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

describe('markOrderPaid', () => {
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
});

/** Follows next_cursor to the end, checking each page as a client relies on it; every id seen, in order. */
async function walk(caller: TestCaller, since: string | undefined, limit: number) {
  const ids: number[] = [];
  let cursor: number | null = 0;
  for (let guard = 0; cursor !== null && guard < 100; guard++) {
    const page: Awaited<ReturnType<typeof listOrders>> = await listOrders(caller, { cursor, limit, since });
    ids.push(...page.data.map((o) => o.id));
    if (page.next_cursor !== null) {
      // A page that points further is full, and its cursor is its last id.
      expect(page.data).toHaveLength(limit);
      expect(page.next_cursor).toBe(page.data.at(-1)?.id);
    }
    cursor = page.next_cursor;
  }
  return ids;
}

const hour = (h: number) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + h * 3_600_000).toISOString();

describe('listOrders: walks', () => {
  it('walks every order exactly once, whatever the page size, and shows no other store', async () => {
    const { storeId, caller } = await storeWithCaller(['orders:read']);
    for (let i = 0; i < 23; i++) await placeTestOrder(storeId);
    const all = Array.from({ length: 23 }, (_, i) => i + 1);
    for (const limit of [1, 4, 7, 22]) expect(await walk(caller, undefined, limit), `limit ${limit}`).toEqual(all);
    const { caller: other } = await storeWithCaller(['orders:read']);
    expect(await listOrders(other, { cursor: 0, limit: 50, since: undefined })).toEqual({
      data: [],
      next_cursor: null,
    });
  });

  it('walks the orders updated since an instant over several pages without skips or repeats', async () => {
    const { storeId, caller } = await storeWithCaller(['orders:read']);
    // Order i (id i) was last updated at hour UPDATED[i-1]: ids and update times in different orders.
    const UPDATED = [5, 12, 1, 20, 9, 14, 3, 18, 10, 7, 16, 11, 2, 19, 13, 6, 17, 4, 15, 8];
    for (const h of UPDATED) await orderIn(storeId, 'pending', { updatedAt: hour(h) });
    const from6 = UPDATED.flatMap((u, i) => (u >= 6 ? [i + 1] : []));
    for (const limit of [1, 3, 4, 15]) expect(await walk(caller, hour(6), limit), `limit ${limit}`).toEqual(from6);
  });

  it('never skips or repeats while orders change during the walk', async () => {
    const { storeId, caller } = await storeWithCaller(['orders:read', 'orders:write-status']);
    const orders = [];
    for (let i = 0; i < 12; i++)
      orders.push(await orderIn(storeId, 'pending', { updatedAt: hour(i % 2 === 0 ? 30 : 1) }));
    const since = hour(24); // matches the 6 even-indexed orders
    const first = await listOrders(caller, { cursor: 0, limit: 2, since });
    expect(first.data.map((o) => o.id)).toEqual([1, 3]);
    // Change an order already returned (id 1) and one ahead of the cursor that did not match before (id 8).
    for (const o of [orders[0], orders[7]])
      expect(await move(caller, o?.reference as string, 'processing')).toMatchObject({ kind: 'answered' });
    const rest: number[] = [];
    let cursor = first.next_cursor;
    while (cursor !== null) {
      const page = await listOrders(caller, { cursor, limit: 2, since });
      rest.push(...page.data.map((o) => o.id));
      cursor = page.next_cursor;
    }
    expect(rest).toEqual([5, 7, 8, 9, 11]);
    // The next poll (from the start) sees the changed order 1 again, now processing.
    expect((await listOrders(caller, { cursor: 0, limit: 1, since })).data[0]).toMatchObject({
      id: 1,
      status: 'processing',
    });
  });

  it('walks 270 matching orders of 300 without skips or repeats (main partition walk)', async () => {
    const { storeId, caller } = await storeWithCaller(['orders:read']);
    const expected: number[] = [];
    for (let batch = 0; batch < 300; batch += 25) {
      const placed = await Promise.all(
        Array.from({ length: 25 }, async (_, j) => {
          const matches = (batch + j) % 10 !== 0;
          const order = await orderIn(storeId, 'pending', { updatedAt: hour(matches ? 10 + (j % 7) : 2) });
          return { id: order.id, matches };
        }),
      );
      expected.push(...placed.filter((p) => p.matches).map((p) => p.id));
    }
    expected.sort((a, b) => a - b);
    expect(expected).toHaveLength(270);
    expect(await walk(caller, hour(10), 50)).toEqual(expected);
    expect(await walk(caller, hour(10), 7)).toEqual(expected);
  });
});
