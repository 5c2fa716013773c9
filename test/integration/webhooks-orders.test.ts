import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCommand, client, createKey, createStore, type TestKey } from '#fixtures/api.ts';
import { deliveries, startReceiver, verify, waitFor } from '#fixtures/webhooks.ts';

/** End to end: each order change's outbox event, through the stream and the queue, to a receiver. */
describe('webhooks: order.created, order.paid and order.status_changed, signed', () => {
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
  /** Requests the receiver got about one order, of one event type. */
  const receivedFor = (r: typeof receiver, reference: string, type: string) =>
    r.received.filter((q) => {
      const body = JSON.parse(q.body);
      return body.type === type && body.data.order.reference === reference;
    });
  const setStatus = (reference: string, status: string, idempotencyKey = randomUUID()) =>
    writer.post(`/orders/${encodeURIComponent(reference)}/status`, { status }, { 'Idempotency-Key': idempotencyKey });
  /**
   * "Nothing more arrives", without a sleep: another order is placed and changed after what the
   * test did, and its status change has arrived (the stream keeps a store's writes in order).
   */
  const afterLaterChange = async () => {
    const later = `WH-${randomUUID().slice(0, 8)}`;
    await placeOrder(later);
    expect((await setStatus(later, 'processing')).status).toBe(200);
    await waitFor('the later change', () => receivedFor(receiver, later, 'order.status_changed').length > 0);
  };

  it('delivers the change with the full order, signed, and standardwebhooks verifies it', async () => {
    const reference = `WH-${randomUUID().slice(0, 8)}`;
    await placeOrder(reference);
    const started = Date.now();
    const res = await setStatus(reference, 'processing');
    expect(res.status).toBe(200);

    const request = await waitFor('the webhook', () => receivedFor(receiver, reference, 'order.status_changed')[0]);
    console.info(`status change → delivery through the API on the local stack: ${request.at - started} ms`);
    const event = verify(listener.webhook_secret, request) as {
      type: string;
      timestamp: string;
      data: Record<string, any>;
    };
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
    await waitFor('the webhook', () => receivedFor(receiver, reference, 'order.status_changed').length > 0);
    expect((await setStatus(reference, 'cancelled')).status).toBe(200); // already cancelled: no event
    await afterLaterChange();
    const ofOrder = receivedFor(receiver, reference, 'order.status_changed');
    expect(ofOrder).toHaveLength(1);
    expect(JSON.parse(ofOrder[0]!.body).data).toMatchObject({ previous_status: 'pending', status: 'cancelled' });
  });

  it('placing an order delivers one signed order.created with the order as placed', async () => {
    const reference = `WH-${randomUUID().slice(0, 8)}`;
    const placed = await placeOrder(reference);
    const request = await waitFor('order.created', () => receivedFor(receiver, reference, 'order.created')[0]);
    const event = verify(listener.webhook_secret, request) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    // The event id and its number in the store's log ride in the body and the headers alike.
    expect(event).toEqual({
      id: request.headers['webhook-id'],
      sequence: Number(request.headers['webhook-sequence']),
      type: 'order.created',
      timestamp: placed.created_at,
      origin: { kind: 'storefront' },
      data: { order: placed },
    });
    expect(Number.isInteger(Number(request.headers['webhook-sequence']))).toBe(true);
    await afterLaterChange();
    expect(receivedFor(receiver, reference, 'order.created')).toHaveLength(1);
    expect(receiver.received.filter((q) => JSON.parse(q.body).data.order.reference === reference)).toHaveLength(1);
  });

  it('confirming the payment delivers one signed order.paid; a repeated confirmation delivers nothing', async () => {
    const reference = `WH-${randomUUID().slice(0, 8)}`;
    await placeOrder(reference);
    const paid = await adminCommand<Record<string, unknown>>('orders mark-paid', { store: storeId, reference });
    expect(await adminCommand('orders mark-paid', { store: storeId, reference })).toEqual(paid);
    const request = await waitFor('order.paid', () => receivedFor(receiver, reference, 'order.paid')[0]);
    const event = verify(listener.webhook_secret, request) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    expect(event).toEqual({
      id: request.headers['webhook-id'],
      sequence: Number(request.headers['webhook-sequence']),
      origin: { kind: 'storefront' },
      type: 'order.paid',
      timestamp: paid.updated_at,
      data: { order: paid, previous_status: 'pending', status: 'paid' },
    });
    await afterLaterChange();
    expect(receivedFor(receiver, reference, 'order.paid')).toHaveLength(1);
    expect(receivedFor(receiver, reference, 'order.status_changed')).toHaveLength(0);
    const types = receiver.received
      .filter((q) => JSON.parse(q.body).data.order.reference === reference)
      .map((q) => JSON.parse(q.body).type);
    expect(types.sort()).toEqual(['order.created', 'order.paid']);
  });
});
