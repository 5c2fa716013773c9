import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, client, createKey, createStore } from '#fixtures/api.ts';
import { idemKey, orderFile, statusPath } from '#fixtures/orders.ts';
import { afterLaterEvent, startReceiver, verify, waitFor } from '#fixtures/webhooks.ts';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const typesFor = (r: Receiver, reference: string) =>
  r.received
    .map((q) => JSON.parse(q.body) as { type: string; data: { order: { reference: string } } })
    .filter((e) => e.data.order.reference === reference)
    .map((e) => e.type)
    .sort();

/** `keys create|set-webhook --events`: each key receives the order events it chose, through the real pipeline. */
describe('webhooks: a key chooses its events', () => {
  const receivers: Receiver[] = [];
  let storeId: string;
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });
  const receiver = async () => {
    const r = await startReceiver();
    receivers.push(r);
    return r;
  };

  let all: Receiver, createdOnly: Receiver, later: Receiver;
  let laterKeyId: number;
  let allSecret: string;
  beforeAll(async () => {
    storeId = await createStore();
    [all, createdOnly, later] = [await receiver(), await receiver(), await receiver()];
    allSecret = (await createKey(storeId, ['orders:read'], { webhook_url: all.url })).webhook_secret;
    const c = await createKey(storeId, ['orders:read'], { webhook_url: createdOnly.url, events: 'order.created' });
    expect(c).toMatchObject({ events: ['order.created'] });
    laterKeyId = (await createKey(storeId, ['orders:read'], { webhook_url: later.url })).id;
  });

  it('delivers each key only the events it chose; the default is every order event', async () => {
    const set = await adminCommand<Record<string, unknown>>('keys set-webhook', {
      id: laterKeyId,
      events: 'order.status_changed, order.paid',
    });
    expect(set).toMatchObject({ webhook_url: later.url, events: ['order.paid', 'order.status_changed'] });

    const writer = client((await createKey(storeId, ['orders:write-status'])).token);
    const reference = `EV-${randomUUID().slice(0, 8)}`;
    await adminCommand('orders place', { store: storeId, file: orderFile({ reference }) });
    await adminCommand('orders mark-paid', { store: storeId, reference });
    expect(
      (await writer.post(statusPath(reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() })).status,
    ).toBe(200);

    await waitFor('all three events at the default key', () => typesFor(all, reference).length === 3);
    await waitFor('two events at the later key', () => typesFor(later, reference).length === 2);
    // Nothing more arrives: later events each key does take have come through behind these.
    const marker = `${reference}-M`;
    await adminCommand('orders place', { store: storeId, file: orderFile({ reference: marker }) });
    await waitFor('the later order.created at the created-only key', () => typesFor(createdOnly, marker).length === 1);
    await afterLaterEvent(storeId, later);
    expect(typesFor(all, reference)).toEqual(['order.created', 'order.paid', 'order.status_changed']);
    expect(typesFor(createdOnly, reference)).toEqual(['order.created']);
    expect(typesFor(later, reference)).toEqual(['order.paid', 'order.status_changed']);
    for (const q of all.received) verify(allSecret, q);
  });

  it('lists every key with its events', async () => {
    const listed = await adminCommand<{ data: { id: number; events: string[] }[] }>('keys list', { store: storeId });
    expect(listed.data.map((k) => k.events)).toEqual([
      ['order.created', 'order.paid', 'order.status_changed'],
      ['order.created'],
      ['order.paid', 'order.status_changed'],
      ['order.created', 'order.paid', 'order.status_changed'],
    ]);
  });

  it('refuses unknown or no event names with validation_failed on events, and changes nothing', async () => {
    for (const events of ['order.refunded', 'order.created,nope', ' , ', 'webhook.ping']) {
      const set = await admin({ command: 'keys set-webhook', args: { id: laterKeyId, events } });
      expect(set, events).toMatchObject({ ok: false, error: { code: 'validation_failed', field: 'events' } });
      const created = await admin({
        command: 'keys create',
        args: { store: storeId, name: 'x', abilities: 'orders:read', events },
      });
      expect(created, events).toMatchObject({ ok: false, error: { code: 'validation_failed', field: 'events' } });
    }
    const listed = await adminCommand<{ data: { id: number; events: string[] }[] }>('keys list', { store: storeId });
    expect(listed.data).toHaveLength(4);
    expect(listed.data.find((k) => k.id === laterKeyId)!.events).toEqual(['order.paid', 'order.status_changed']);
    expect(await admin({ command: 'keys set-webhook', args: { id: 99_999_999, events: 'order.paid' } })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
  });
});

/**
 * `--exclude-own`: a key that asked not to hear its own echo gets no delivery of an event its own
 * write caused, and still gets another key's. The fan-out reads the store's keys through gsi1,
 * whose projection has no `exclude_own`; this checks the flag reaches the fan-out all the same.
 */
describe('webhooks: --exclude-own in the fan-out', () => {
  it("skips the events the key's own writes caused and delivers another key's", async () => {
    const storeId = await createStore();
    const r = await startReceiver();
    try {
      const own = await createKey(storeId, ['orders:read', 'orders:write-status'], {
        webhook_url: r.url,
        events: 'order.status_changed',
        exclude_own: 'true',
      });
      expect(own).toMatchObject({ exclude_own: true });
      const other = await createKey(storeId, ['orders:write-status']);
      const reference = `XO-${randomUUID().slice(0, 8)}`;
      await adminCommand('orders place', { store: storeId, file: orderFile({ reference }) });
      await adminCommand('orders mark-paid', { store: storeId, reference });
      const move = (token: string, status: string) =>
        client(token).post(statusPath(reference), { status }, { 'Idempotency-Key': idemKey() });
      expect((await move(own.token, 'processing')).status).toBe(200);
      expect((await move(other.token, 'shipped')).status).toBe(200);

      await waitFor('the other key’s change', () => typesFor(r, reference).length === 1);
      await afterLaterEvent(storeId, r);
      const got = r.received
        .map((q) => JSON.parse(q.body) as { type: string; origin: unknown; data: { order: { reference: string } } })
        .filter((e) => e.data.order.reference === reference);
      expect(got.map((e) => e.origin)).toEqual([{ kind: 'key', key_id: other.id }]);
    } finally {
      await r.close();
    }
  });
});
