import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '../../shared/http/api-routes.ts';
import { adminCommand, client, createKey, createStore, type TestKey } from '../fixtures/api.ts';
import { deliveries, sleep, startReceiver, verify, waitFor } from '../fixtures/webhooks.ts';

const ordersRouteExists = API_ROUTES.some((r) => r.method === 'POST' && r.path === '/orders/{reference}/status');

/** End to end: the status endpoint's outbox event, through the stream and the queue, to a receiver. */
describe.skipIf(!ordersRouteExists)('webhooks: POST /orders/{reference}/status → signed order.status_changed', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let storeId: string;
  let writer: ReturnType<typeof client>;
  let listener: TestKey;

  beforeAll(async () => {
    receiver = await startReceiver();
    storeId = await createStore();
    writer = client((await createKey(storeId, ['orders:write-status'])).token);
    listener = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
  });
  afterAll(async () => {
    await receiver.close();
  });

  const placeOrder = (reference: string) =>
    adminCommand<Record<string, unknown>>('orders place', {
      store: storeId,
      file: {
        reference,
        status: 'pending',
        currency_code: 'EUR',
        customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: null },
        items: [{ sku: 'CH-1', name: 'Oak Chair', quantity: 2, price: 4900 }],
        shipping_total: 500,
        discount_total: 0,
        paid_total: 0,
      },
    });
  const setStatus = (reference: string, status: string, idempotencyKey = randomUUID()) =>
    writer.post(`/orders/${encodeURIComponent(reference)}/status`, { status }, { 'Idempotency-Key': idempotencyKey });

  it('delivers the change with the full order, signed, and standardwebhooks verifies it', async () => {
    const reference = `WH-${randomUUID().slice(0, 8)}`;
    await placeOrder(reference);
    const started = Date.now();
    const res = await setStatus(reference, 'processing');
    expect(res.status).toBe(200);

    const request = await waitFor('the webhook', () => receiver.received.find((q) => JSON.parse(q.body).data.order.reference === reference));
    console.info(`status change → delivery through the API on the local stack: ${request.at - started} ms`);
    const event = verify(listener.webhook_secret, request) as { type: string; timestamp: string; data: Record<string, any> };
    expect(event.type).toBe('order.status_changed');
    expect(event.data.previous_status).toBe('pending');
    expect(event.data.status).toBe('processing');
    // The full order as the API returned it: a receiver needs no call back.
    expect(event.data.order).toEqual(res.body.data);
    expect(event.timestamp).toBe(res.body.data.updated_at);
    const log = await deliveries(listener.id);
    expect(log.find((d) => d.event_id === request.headers['webhook-id'])).toBeDefined();
  });

  it('ten racing status changes produce exactly one delivery; a no-op change produces none', async () => {
    const reference = `WH-${randomUUID().slice(0, 8)}`;
    await placeOrder(reference);
    const results = await Promise.all(Array.from({ length: 10 }, () => setStatus(reference, 'cancelled')));
    expect(results.every((r) => r.status === 200 || r.status === 409)).toBe(true);
    await waitFor('the webhook', () => receiver.received.some((q) => JSON.parse(q.body).data.order.reference === reference));
    expect((await setStatus(reference, 'cancelled')).status).toBe(200); // already cancelled: no event
    await sleep(1500);
    const ofOrder = receiver.received.filter((q) => JSON.parse(q.body).data.order.reference === reference);
    expect(ofOrder).toHaveLength(1);
    expect(JSON.parse(ofOrder[0]!.body).data).toMatchObject({ previous_status: 'pending', status: 'cancelled' });
  });
});
