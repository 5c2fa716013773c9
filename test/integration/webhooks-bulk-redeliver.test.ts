import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { deliveries, newEventId, putOutboxEvent, startReceiver, waitFor } from '#fixtures/webhooks.ts';

async function adminError(command: string, args: Record<string, unknown>) {
  const out = await admin({ command, args });
  if (out.ok) throw new Error(`${command} succeeded unexpectedly`);
  return out.error;
}

interface Bulk {
  redelivered: number;
  skipped: string[];
  next_since: string | null;
  data: { event_id: string; state: string; redeliveries: number }[];
}

// The shared test stack (WEBHOOK_RETRY_SCHEDULE=1,1,2: a delivery fails for good after 4 attempts).
describe('webhooks redeliver --since (bulk)', () => {
  const failing = new Set<string>();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver((req) => ({ status: failing.has(req.headers['webhook-id'] ?? '') ? 500 : 204 }));
  });
  afterAll(async () => {
    await receiver.close();
  });
  const requestsFor = (eventId: string) => receiver.received.filter((q) => q.headers['webhook-id'] === eventId).length;

  it('redelivers every delivery since a time, or only the failed ones, oldest first, with the same webhook-id', async () => {
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
    const before = await putOutboxEvent(store);
    await waitFor('the first event delivered', async () =>
      (await deliveries(key.id)).some((d) => d.event_id === before.eventId && d.state === 'delivered'),
    );
    const since = new Date().toISOString();
    const ok = await putOutboxEvent(store);
    const bad = await putOutboxEvent(store);
    failing.add(bad.eventId);
    await waitFor('one delivered, one failed for good', async () => {
      const log = await deliveries(key.id);
      return (
        log.find((d) => d.event_id === ok.eventId)?.state === 'delivered' &&
        log.find((d) => d.event_id === bad.eventId)?.state === 'failed'
      );
    });

    // --state failed: only the failed one, which now succeeds.
    failing.delete(bad.eventId);
    const onlyFailed = await adminCommand<Bulk>('webhooks redeliver', { id: key.id, since, state: 'failed' });
    expect(onlyFailed).toMatchObject({ redelivered: 1, skipped: [], next_since: null });
    expect(onlyFailed.data.map((d) => d.event_id)).toEqual([bad.eventId]);
    await waitFor(
      'the failed one delivered',
      async () => (await deliveries(key.id)).find((d) => d.event_id === bad.eventId)?.state === 'delivered',
    );
    expect(requestsFor(ok.eventId)).toBe(1);

    // Everything since: both, oldest delivery first (the fan-out creates a store's deliveries side
    // by side, so two events a moment apart may have theirs in either order); the event before
    // `since` is left alone.
    const age = new Map((await deliveries(key.id)).map((d) => [d.event_id, d.created_at]));
    const oldestFirst = [ok.eventId, bad.eventId].sort(
      (a, b) => age.get(a)!.localeCompare(age.get(b)!) || a.localeCompare(b),
    );
    const all = await adminCommand<Bulk>('webhooks redeliver', { id: key.id, since });
    expect(all.data.map((d) => d.event_id)).toEqual(oldestFirst);
    await waitFor('both delivered again', () => requestsFor(ok.eventId) === 2 && requestsFor(bad.eventId) === 6);
    expect(requestsFor(before.eventId)).toBe(1);
    // The receiver sees the request before the signer records its answer: wait for the log too.
    const log = await waitFor('both recorded as delivered', async () => {
      const rows = await deliveries(key.id);
      const states = [ok.eventId, bad.eventId].map((id) => rows.find((d) => d.event_id === id)?.state);
      return states.every((s) => s === 'delivered') ? rows : undefined;
    });
    expect(log.find((d) => d.event_id === ok.eventId)).toMatchObject({ state: 'delivered', redeliveries: 1 });
    expect(log.find((d) => d.event_id === bad.eventId)).toMatchObject({ state: 'delivered', redeliveries: 2 });
  });

  it('refuses a bad request and changes nothing', async () => {
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
    expect(await adminError('webhooks redeliver', { id: key.id })).toMatchObject({
      code: 'validation_failed',
      field: 'event',
    });
    expect(
      await adminError('webhooks redeliver', { id: key.id, event: newEventId(), since: '2026-01-01T00:00:00Z' }),
    ).toMatchObject({ code: 'validation_failed', field: 'event' });
    expect(await adminError('webhooks redeliver', { id: key.id, since: 'yesterday' })).toMatchObject({
      code: 'validation_failed',
      field: 'since',
    });
    expect(await adminError('webhooks redeliver', { id: key.id, since: '2026-01-01', state: 'lost' })).toMatchObject({
      code: 'validation_failed',
      field: 'state',
    });
    expect(await adminError('webhooks redeliver', { id: key.id, event: newEventId(), state: 'failed' })).toMatchObject({
      code: 'validation_failed',
      field: 'state',
    });
    expect(await adminError('webhooks redeliver', { id: 99_999_999, since: '2026-01-01' })).toMatchObject({
      code: 'not_found',
      field: 'id',
    });
    expect(await adminError('webhooks endpoints', {})).toMatchObject({ code: 'validation_failed', field: 'store' });
    // Nothing to redeliver is an empty answer, not an error.
    expect(await adminCommand<Bulk>('webhooks redeliver', { id: key.id, since: '2026-01-01' })).toMatchObject({
      redelivered: 0,
      data: [],
    });
    expect(await deliveries(key.id)).toEqual([]);
  });

  it('lists the endpoints of a store with their state', async () => {
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
    await createKey(store, ['orders:read']);
    const out = await adminCommand<{ data: { key_id: number; endpoint: { state: string; reason: string | null } }[] }>(
      'webhooks endpoints',
      { store },
    );
    expect(out.data).toEqual([
      expect.objectContaining({
        key_id: key.id,
        webhook_url: receiver.url,
        endpoint: expect.objectContaining({ state: 'active', reason: null, consecutive_failures: 0 }),
      }),
    ]);
  });
});
