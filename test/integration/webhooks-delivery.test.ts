import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCommand, createKey, createStore, type TestKey } from '#fixtures/api.ts';
import {
  afterLaterEvent,
  deleteOutboxEvent,
  deliveries,
  recordedDelivery,
  putOutboxEvent,
  sampleOrder,
  startReceiver,
  verify,
  waitFor,
} from '#fixtures/webhooks.ts';

describe('webhooks: outbox event → signed delivery', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let other: Awaited<ReturnType<typeof startReceiver>>;
  let storeId: string;
  let key: TestKey;
  const latencies: number[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    other = await startReceiver();
    storeId = await createStore();
    key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
  });
  afterAll(async () => {
    await receiver.close();
    await other.close();
    if (latencies.length) {
      const sorted = [...latencies].sort((a, b) => a - b);
      console.info(
        `outbox write → delivery on the local stack: ${sorted.map((l) => `${l} ms`).join(', ')} (median ${sorted[Math.floor(sorted.length / 2)]} ms)`,
      );
    }
  });

  const requestsFor = (r: typeof receiver, eventId: string) =>
    r.received.filter((q) => q.headers['webhook-id'] === eventId);

  it('POSTs the event signed by Standard Webhooks, and standardwebhooks verifies it', async () => {
    const order = sampleOrder({ status: 'shipped' });
    const { eventId, payload, writtenAt } = await putOutboxEvent(storeId, { order, previousStatus: 'processing' });
    const [request] = await waitFor('the delivery', () =>
      requestsFor(receiver, eventId).length ? requestsFor(receiver, eventId) : undefined,
    );
    latencies.push((request?.at ?? 0) - writtenAt);

    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toMatch(/^store-integration-webhooks\//);
    expect(request?.headers['webhook-id']).toBe(eventId);
    // Signed between the write and the arrival, however long the pipeline took.
    expect(Number(request?.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(Math.floor(writtenAt / 1000));
    expect(Number(request?.headers['webhook-timestamp'])).toBeLessThanOrEqual(
      Math.ceil((request?.headers ? request.at : 0) / 1000),
    );
    expect(request?.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // What a receiver does: verify over the raw body, then parse.
    const sent = JSON.parse(request!.body);
    expect(verify(key.webhook_secret, request!)).toEqual({
      id: eventId,
      sequence: sent.sequence,
      origin: null,
      ...payload,
    });
    // Numbered in the store's log before the fan-out, and the header says the same.
    expect(sent.sequence).toBeGreaterThanOrEqual(1);
    expect(request?.headers['webhook-sequence']).toBe(String(sent.sequence));
    expect(sent).toEqual({
      id: eventId,
      sequence: sent.sequence,
      origin: null,
      type: 'order.status_changed',
      timestamp: payload.timestamp,
      changed_fields: ['status'],
      data: { order, previous_status: 'processing', status: 'shipped' },
    });
    // Field order as in the contract, whatever order the stream image had.
    expect(Object.keys(JSON.parse(request!.body).data.order)).toEqual(Object.keys(order));
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, request!)).toThrow(/No matching signature/);

    const logged = await recordedDelivery(key.id, eventId);
    expect(logged).toMatchObject({
      event_id: eventId,
      type: 'order.status_changed',
      attempts: 1,
      last_status_code: 204,
      last_error: null,
      next_attempt_at: null,
      redeliveries: 0,
    });
  });

  it('delivers to every receiving key of the store, each signed with its own secret, and to no other store', async () => {
    const second = await createKey(storeId, ['orders:read', 'catalog:read'], { webhook_url: other.url });
    const elsewhere = await createKey(await createStore(), ['orders:read'], { webhook_url: other.url });
    const { eventId, writtenAt } = await putOutboxEvent(storeId);
    const [a] = await waitFor('first key', () =>
      requestsFor(receiver, eventId).length ? requestsFor(receiver, eventId) : undefined,
    );
    const [b] = await waitFor('second key', () =>
      requestsFor(other, eventId).length ? requestsFor(other, eventId) : undefined,
    );
    latencies.push((a?.at ?? 0) - writtenAt);
    expect(() => verify(key.webhook_secret, a!)).not.toThrow();
    expect(() => verify(second.webhook_secret, b!)).not.toThrow();
    expect(() => verify(key.webhook_secret, b!)).toThrow();
    expect(a?.body).toBe(b?.body);
    await afterLaterEvent(storeId, other);
    expect(requestsFor(other, eventId)).toHaveLength(1);
    expect(await deliveries(elsewhere.id)).toEqual([]);
  });

  it('sends nothing to keys without orders:read, without a webhook URL, or revoked', async () => {
    const quietStore = await createStore();
    const silent = await startReceiver();
    try {
      const listening = await createKey(quietStore, ['orders:read'], { webhook_url: receiver.url });
      const noAbility = await createKey(quietStore, ['catalog:read', 'orders:write-status'], {
        webhook_url: silent.url,
      });
      const noUrl = await createKey(quietStore, ['orders:read']);
      const revoked = await createKey(quietStore, ['orders:read'], { webhook_url: silent.url });
      await adminCommand('keys revoke', { id: revoked.id });

      const { eventId } = await putOutboxEvent(quietStore);
      await waitFor('the receiving key', () => requestsFor(receiver, eventId).length === 1);
      await afterLaterEvent(quietStore, receiver);
      expect(silent.received).toHaveLength(0);
      for (const k of [noAbility, noUrl, revoked]) expect(await deliveries(k.id)).toEqual([]);
      expect((await recordedDelivery(listening.id, eventId)).state).toBe('delivered');
    } finally {
      await silent.close();
    }
  });

  it('delivers once per key when the stream carries the same event again', async () => {
    const { eventId } = await putOutboxEvent(storeId);
    await waitFor('the delivery', () => requestsFor(receiver, eventId).length === 1);
    // A second INSERT of the same event (what a replayed or duplicated stream record looks like
    // to the fan-out): delete the outbox item and write it again, twice.
    for (let i = 0; i < 2; i++) {
      await deleteOutboxEvent(storeId, eventId);
      await putOutboxEvent(storeId, { eventId });
    }
    await afterLaterEvent(storeId, receiver);
    expect(requestsFor(receiver, eventId)).toHaveLength(1);
    expect(await recordedDelivery(key.id, eventId)).toMatchObject({ state: 'delivered', attempts: 1 });
  });

  it('ignores updates and deletes of outbox items (only INSERTs are events)', async () => {
    const { eventId } = await putOutboxEvent(storeId);
    await waitFor('the delivery', () => requestsFor(receiver, eventId).length === 1);
    await putOutboxEvent(storeId, { eventId, order: sampleOrder({ status: 'delivered' }) }); // a MODIFY
    await deleteOutboxEvent(storeId, eventId); // a REMOVE (what a TTL expiry looks like)
    await afterLaterEvent(storeId, receiver);
    expect(requestsFor(receiver, eventId)).toHaveLength(1);
  });
});
