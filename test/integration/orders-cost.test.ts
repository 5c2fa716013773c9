import { beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createStore } from '#fixtures/api.ts';
import { idemKey, insertTestOrder } from '#fixtures/orders.ts';
import { handler } from '#functions/orders/handler.ts';
import type { DbStats } from '#shared/context.ts';
import { costRow, lambdaEvent, measureLambda, type EventInit } from '#fixtures/lambda-cost.ts';
import type { Order } from '#domain/order/order.ts';

/**
 * Round trips and capacity units of the orders Lambda itself (the authorizer's one UpdateItem
 * comes on top of every request). Invokes the handler in-process with the event API Gateway
 * would send, counted in its request context, against a store of 1,000 orders.
 */
const STORE_SIZE = 1000;

const eventFor = (storeId: string, operation: string, init: EventInit) =>
  lambdaEvent(storeId, 999_999, operation, init);
const measure = (event: APIGatewayProxyEvent) => measureLambda(handler, event);

const rows: Record<string, string> = {};
const record = (name: string, stats: DbStats) => {
  rows[name] = costRow(stats);
};

describe('orders: round trips and capacity per request', () => {
  let storeId: string;
  let orders: Order[] = [];
  const old = '2025-06-01T00:00:00.000Z';
  beforeAll(async () => {
    storeId = await createStore();
    for (let i = 0; i < STORE_SIZE; i += 50) {
      orders.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, () => insertTestOrder(storeId, { status: 'paid', updatedAt: old })),
        )),
      );
    }
    orders = orders.sort((a, b) => a.id - b.id);
  }, 300_000);

  it('GET /orders, a plain cursor page: one Query of limit + 1 orders', async () => {
    const r = await measure(
      eventFor(storeId, 'listOrders', { path: '/orders', query: { cursor: '500', limit: '15' } }),
    );
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(15);
    expect(r.stats.calls).toBe(1);
    record('GET /orders?cursor=500&limit=15', r.stats);
    const max = await measure(eventFor(storeId, 'listOrders', { path: '/orders', query: { limit: '50' } }));
    record('GET /orders?limit=50', max.stats);
  });

  it('GET /orders?updated_since, the common poll (3 of 1,000 changed): one index Query over the changed orders only', async () => {
    const since = new Date().toISOString();
    for (const o of orders.slice(100, 103)) {
      const r = await measure(
        eventFor(storeId, 'setOrderStatus', {
          path: `/orders/${o.reference}/status`,
          params: { reference: o.reference },
          body: { status: 'processing' },
          headers: { 'idempotency-key': idemKey() },
        }),
      );
      expect(r.status).toBe(200);
    }
    const r = await measure(eventFor(storeId, 'listOrders', { path: '/orders', query: { updated_since: since } }));
    expect(r.body.data.map((o: { id: number }) => o.id)).toEqual(orders.slice(100, 103).map((o) => o.id));
    expect(r.stats.calls).toBe(1);
    record('GET /orders?updated_since=<recent> (3 changed of 1,000)', r.stats);
  });

  it('GET /orders?updated_since, the worst case (every order matches): the capped probe, then the id walk', async () => {
    const r = await measure(
      eventFor(storeId, 'listOrders', {
        path: '/orders',
        query: { updated_since: '2000-01-01T00:00:00Z', limit: '15' },
      }),
    );
    expect(r.body.data).toHaveLength(15);
    expect(r.stats.calls).toBe(2);
    record('GET /orders?updated_since=<long ago> (1,000 match), one page of 15', r.stats);
  });

  it('GET /orders?updated_since, a large sparse changed set (150 of 1,000, from id ~200): probe, then a growing id walk', async () => {
    const since = new Date().toISOString();
    const changed = orders.slice(200, 500).filter((_, i) => i % 2 === 0);
    for (const o of changed) {
      await measure(
        eventFor(storeId, 'setOrderStatus', {
          path: `/orders/${o.reference}/status`,
          params: { reference: o.reference },
          body: { status: 'cancelled' },
          headers: { 'idempotency-key': idemKey() },
        }),
      );
    }
    const r = await measure(eventFor(storeId, 'listOrders', { path: '/orders', query: { updated_since: since } }));
    expect(r.body.data.map((o: { id: number }) => o.id)).toEqual(changed.slice(0, 15).map((o) => o.id));
    record('GET /orders?updated_since=<recent> (150 changed of 1,000, sparse)', r.stats);
  }, 180_000);

  it('POST /orders/{reference}/status: first call, replay, no-op, errors', async () => {
    const o = orders[700]!;
    const k = idemKey();
    const ev = () =>
      eventFor(storeId, 'setOrderStatus', {
        path: `/orders/${o.reference}/status`,
        params: { reference: o.reference },
        body: { status: 'processing' },
        headers: { 'idempotency-key': k },
      });
    const first = await measure(ev());
    expect(first.status).toBe(200);
    // BatchGetItem (order by reference + idempotency record), TransactWriteItems.
    expect(first.stats.ops).toEqual(['BatchGetItem', 'TransactWriteItems']);
    record('POST status, first call (change)', first.stats);
    const replay = await measure(ev());
    expect(replay.status).toBe(200);
    expect(replay.stats.calls).toBe(1);
    record('POST status, replay', replay.stats);

    const post = (body: unknown, reference = o.reference) =>
      measure(
        eventFor(storeId, 'setOrderStatus', {
          path: `/orders/${reference}/status`,
          params: { reference },
          body,
          headers: { 'idempotency-key': idemKey() },
        }),
      );
    const noop = await post({ status: 'processing' });
    expect(noop.stats.ops).toEqual(['BatchGetItem', 'PutItem']);
    record('POST status, no-op (same status)', noop.stats);
    const forbidden = await post({ status: 'delivered' });
    expect(forbidden.status).toBe(409);
    record('POST status, 409 invalid_transition', forbidden.stats);
    const unknown = await post({ status: 'shipped' }, 'NO-SUCH-REF');
    expect(unknown.status).toBe(404);
    record('POST status, 404 unknown reference', unknown.stats);
    const invalid = await post({ status: 'paid' });
    expect(invalid.status).toBe(422);
    expect(invalid.stats.calls).toBe(1);
    record('POST status, 422 (validation; stored at once)', invalid.stats);
  });

  it('prints the table', () => {
    console.log(
      '\n' +
        Object.entries(rows)
          .map(([k, v]) => `${k.padEnd(62)} ${v}`)
          .join('\n'),
    );
  });
});
