import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createStore } from '#fixtures/api.ts';
import { closedPort, deliveryOf, putOutboxEvent, startReceiver, verify, waitFor } from '#fixtures/webhooks.ts';

// The test stack runs with WEBHOOK_RETRY_SCHEDULE=1,1,2: attempts at about 0, 1, 2 and 4 s.
describe('webhooks: retries, backoff and outages', () => {
  let storeCounter = 0;
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  let stores: string[];
  beforeAll(async () => {
    stores = await Promise.all(Array.from({ length: 5 }, () => createStore()));
  });
  const nextStore = () => stores[storeCounter++] as string;

  it('retries a receiver that fails twice with the same webhook-id, then it is delivered', async () => {
    const r = await receiver((_req, n) => ({ status: n <= 2 ? 500 : 200 }));
    const store = nextStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const { eventId } = await putOutboxEvent(store);

    await waitFor('three attempts', () => r.received.length >= 3);
    expect(r.received.map((q) => q.headers['webhook-id'])).toEqual([eventId, eventId, eventId]);
    // Every attempt is signed afresh (its own timestamp) over the same body.
    expect(new Set(r.received.map((q) => q.body)).size).toBe(1);
    for (const q of r.received) expect(() => verify(key.webhook_secret, q)).not.toThrow();
    const gaps = r.received.slice(1).map((q, i) => q.at - (r.received[i]?.at ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(900); // schedule: 1 s
    expect(gaps[1]).toBeGreaterThanOrEqual(900); // schedule: 1 s

    const d = await waitFor('delivered', async () => {
      const x = await deliveryOf(key.id, eventId);
      return x?.state === 'delivered' ? x : undefined;
    });
    expect(d).toMatchObject({ attempts: 3, last_status_code: 200, last_error: null, next_attempt_at: null });
  });

  it('records each failed attempt in the log with its status code, error and next attempt', async () => {
    const r = await receiver(() => ({ status: 503 }));
    const store = nextStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const { eventId } = await putOutboxEvent(store);
    const pending = await waitFor('a failed first attempt', async () => {
      const x = await deliveryOf(key.id, eventId);
      return x && x.attempts >= 1 && x.state === 'pending' ? x : undefined;
    });
    expect(pending).toMatchObject({ last_status_code: 503, last_error: 'HTTP 503', state: 'pending' });
    expect(Date.parse(pending.next_attempt_at ?? '')).toBeGreaterThan(Date.parse(pending.updated_at));

    // 1 + 3 scheduled retries, then the delivery is given up on (and its message dead-lettered).
    const failed = await waitFor('the delivery to fail for good', async () => {
      const x = await deliveryOf(key.id, eventId);
      return x?.state === 'failed' ? x : undefined;
    });
    expect(failed).toMatchObject({ attempts: 4, last_status_code: 503, next_attempt_at: null });
    expect(failed.last_error).toMatch(/^HTTP 503; gave up after 4 attempts/);
    expect(r.received).toHaveLength(4);
  });

  it('honours Retry-After on 429', async () => {
    const r = await receiver((_req, n) =>
      n === 1 ? { status: 429, headers: { 'Retry-After': '3' } } : { status: 200 },
    );
    const store = nextStore();
    await createKey(store, ['orders:read'], { webhook_url: r.url });
    await putOutboxEvent(store);
    await waitFor('the retry', () => r.received.length >= 2);
    const gap = (r.received[1]?.at ?? 0) - (r.received[0]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(2900); // not the schedule's 1 s
  });

  it('delivers every event that happened while the receiver was down, once it is back', async () => {
    const port = await closedPort();
    const store = nextStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: `http://127.0.0.1:${port}/hooks` });
    const events = [];
    for (let i = 0; i < 3; i++) events.push((await putOutboxEvent(store)).eventId);

    // Every event has had its first attempt refused...
    for (const eventId of events) {
      const d = await waitFor(`a refused attempt of ${eventId}`, async () => {
        const x = await deliveryOf(key.id, eventId);
        return x && x.attempts >= 1 ? x : undefined;
      });
      expect(d.state).toBe('pending');
      expect(d.last_error).toBe('connection failed: ECONNREFUSED');
      expect(d.last_status_code).toBeNull();
    }
    // ...then the receiver comes back on the same address.
    const back = await receiver(undefined, port);
    await waitFor('all three events', () => new Set(back.received.map((q) => q.headers['webhook-id'])).size === 3);
    expect(new Set(back.received.map((q) => q.headers['webhook-id']))).toEqual(new Set(events));
    for (const q of back.received) expect(() => verify(key.webhook_secret, q)).not.toThrow();
    for (const eventId of events) {
      await waitFor('delivered in the log', async () => (await deliveryOf(key.id, eventId))?.state === 'delivered');
    }
    expect(back.received).toHaveLength(3);
  });
});
