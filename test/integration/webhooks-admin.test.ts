import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, createKey, createStore, type TestKey } from '#fixtures/api.ts';
import {
  afterLaterEvent,
  deliveries,
  deliveryOf,
  newEventId,
  putOutboxEvent,
  startReceiver,
  verify,
  waitFor,
  type DeliveryView,
} from '#fixtures/webhooks.ts';

async function adminError(command: string, args: Record<string, unknown>) {
  const out = await admin({ command, args });
  if (out.ok) throw new Error(`${command} succeeded unexpectedly`);
  return out.error;
}

describe('webhooks: admin commands (delivery log, redeliver, secret rotation)', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let failNext = 0;
  beforeAll(async () => {
    receiver = await startReceiver(() => (failNext-- > 0 ? { status: 500 } : { status: 200 }));
  });
  afterAll(async () => {
    await receiver.close();
  });
  const requestsFor = (eventId: string) => receiver.received.filter((q) => q.headers['webhook-id'] === eventId);
  const delivered = (keyId: number, eventId: string) =>
    waitFor(`${eventId} delivered`, async () => {
      const d = await deliveryOf(keyId, eventId);
      return d?.state === 'delivered' ? d : undefined;
    });

  describe('webhooks deliveries', () => {
    let key: TestKey;
    let events: string[];
    beforeAll(async () => {
      const store = await createStore();
      key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
      events = [];
      for (let i = 0; i < 3; i++) {
        events.push((await putOutboxEvent(store)).eventId);
        await delivered(key.id, events[i] as string);
      }
    });

    it('lists the deliveries of a key, newest first, with the log fields and no body', async () => {
      const log = await deliveries(key.id);
      expect(log.map((d) => d.event_id)).toEqual([...events].reverse());
      const [newest] = log as [DeliveryView];
      expect(Object.keys(newest).sort()).toEqual(
        [
          'attempts',
          'created_at',
          'delivered_at',
          'event_id',
          'last_error',
          'last_status_code',
          'next_attempt_at',
          'parked_at',
          'redeliveries',
          'state',
          'type',
          'updated_at',
        ].sort(),
      );
      expect(newest).toMatchObject({
        type: 'order.status_changed',
        attempts: 1,
        last_status_code: 200,
        state: 'delivered',
        last_error: null,
        next_attempt_at: null,
      });
      expect(newest.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(Date.parse(newest.updated_at)).toBeGreaterThanOrEqual(Date.parse(newest.created_at));
    });

    it('takes --limit', async () => {
      const out = await adminCommand<{ data: DeliveryView[] }>('webhooks deliveries', { id: key.id, limit: '2' });
      expect(out.data.map((d) => d.event_id)).toEqual([events[2], events[1]]);
    });

    it('shows an empty log for a key that never received anything', async () => {
      const quiet = await createKey(await createStore(), ['catalog:read']);
      expect(await deliveries(quiet.id)).toEqual([]);
    });

    it('refuses unknown keys and malformed arguments', async () => {
      expect(await adminError('webhooks deliveries', { id: 99_999_999 })).toMatchObject({
        code: 'not_found',
        field: 'id',
      });
      expect(await adminError('webhooks deliveries', { id: 'abc' })).toMatchObject({
        code: 'validation_failed',
        field: 'id',
      });
      expect(await adminError('webhooks deliveries', {})).toMatchObject({ code: 'validation_failed', field: 'id' });
      expect(await adminError('webhooks deliveries', { id: key.id, limit: '0' })).toMatchObject({
        code: 'validation_failed',
        field: 'limit',
      });
    });
  });

  describe('webhooks redeliver', () => {
    it('queues a delivered event again: same webhook-id, fresh signature, the log counts it', async () => {
      const store = await createStore();
      const key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
      const { eventId } = await putOutboxEvent(store);
      await delivered(key.id, eventId);

      const queued = await adminCommand<DeliveryView>('webhooks redeliver', { id: key.id, event: eventId });
      expect(queued).toMatchObject({ event_id: eventId, state: 'pending', redeliveries: 1, attempts: 1 });
      await waitFor('the second request', () => requestsFor(eventId).length === 2);
      const [first, second] = requestsFor(eventId);
      expect(second?.body).toBe(first?.body);
      expect(() => verify(key.webhook_secret, second!)).not.toThrow();
      expect(await delivered(key.id, eventId)).toMatchObject({ attempts: 2, redeliveries: 1, last_status_code: 200 });
    });

    it('revives a delivery that was given up on', async () => {
      const store = await createStore();
      const key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
      failNext = 4; // every attempt of the 1,1,2 schedule fails
      const { eventId } = await putOutboxEvent(store);
      await waitFor('failed', async () => (await deliveryOf(key.id, eventId))?.state === 'failed');
      failNext = 0;
      await adminCommand('webhooks redeliver', { id: key.id, event: eventId });
      expect(await delivered(key.id, eventId)).toMatchObject({ attempts: 5, redeliveries: 1, last_error: null });
      expect(requestsFor(eventId)).toHaveLength(5);
    });

    it('refuses unknown keys and events, and malformed ids', async () => {
      const key = await createKey(await createStore(), ['orders:read'], { webhook_url: receiver.url });
      expect(await adminError('webhooks redeliver', { id: key.id, event: newEventId() })).toMatchObject({
        code: 'not_found',
        field: 'event',
      });
      expect(await adminError('webhooks redeliver', { id: 99_999_999, event: newEventId() })).toMatchObject({
        code: 'not_found',
        field: 'id',
      });
      expect(await adminError('webhooks redeliver', { id: key.id, event: 'nope' })).toMatchObject({
        code: 'validation_failed',
        field: 'event',
      });
      expect(await adminError('webhooks redeliver', { id: key.id })).toMatchObject({
        code: 'validation_failed',
        field: 'event',
      });
    });
  });

  describe('keys rotate-webhook-secret', () => {
    it('shows the new secret once; during the grace period deliveries carry both signatures and both verify', async () => {
      const store = await createStore();
      const key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
      const rotated = await adminCommand<{
        id: number;
        webhook_secret: string;
        previous_webhook_secret_expires_at: string;
      }>('keys rotate-webhook-secret', { id: key.id });
      expect(rotated.id).toBe(key.id);
      expect(rotated.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(rotated.webhook_secret).not.toBe(key.webhook_secret);
      const graceHours = (Date.parse(rotated.previous_webhook_secret_expires_at) - Date.now()) / 3_600_000;
      expect(graceHours).toBeGreaterThan(23.9);
      expect(graceHours).toBeLessThanOrEqual(24);
      expect(rotated).not.toHaveProperty('previous_webhook_secret');
      const listed = await adminCommand<{ data: Record<string, unknown>[] }>('keys list', { store });
      expect(JSON.stringify(listed)).not.toContain(rotated.webhook_secret);

      const { eventId } = await putOutboxEvent(store);
      const [request] = await waitFor('the delivery', () =>
        requestsFor(eventId).length ? requestsFor(eventId) : undefined,
      );
      const signatures = request!.headers['webhook-signature']!.split(' ');
      expect(signatures).toHaveLength(2);
      expect(signatures.every((s) => /^v1,[A-Za-z0-9+/]{43}=$/.test(s))).toBe(true);
      expect(() => verify(rotated.webhook_secret, request!)).not.toThrow();
      expect(() => verify(key.webhook_secret, request!)).not.toThrow();
      // Each secret matches exactly one of the two.
      const only = (secret: string) =>
        new Webhook(secret).sign(
          eventId,
          new Date(Number(request!.headers['webhook-timestamp']) * 1000),
          request!.body,
        );
      expect(signatures).toEqual([only(rotated.webhook_secret), only(key.webhook_secret)]);
    });

    it('refuses revoked and unknown keys', async () => {
      const key = await createKey(await createStore(), ['orders:read']);
      await adminCommand('keys revoke', { id: key.id });
      expect(await adminError('keys rotate-webhook-secret', { id: key.id })).toMatchObject({
        code: 'invalid_transition',
        field: 'id',
      });
      expect(await adminError('keys rotate-webhook-secret', { id: 99_999_999 })).toMatchObject({ code: 'not_found' });
    });
  });

  describe('webhooks replay', () => {
    it('fans an event out again: a key without it gets it, a key that has it gets nothing twice', async () => {
      const store = await createStore();
      const first = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
      const { eventId } = await putOutboxEvent(store);
      await delivered(first.id, eventId);
      // A key given its URL after the event (or one whose stream record failed) has no delivery.
      const late = await createKey(store, ['orders:read'], { webhook_url: receiver.url });
      expect(await deliveryOf(late.id, eventId)).toBeUndefined();

      const replayed = await adminCommand<{ event_id: string; replayed_at: string }>('webhooks replay', {
        store,
        event: eventId,
      });
      expect(replayed.event_id).toBe(eventId);
      await delivered(late.id, eventId);
      const requests = await waitFor('both deliveries', () =>
        requestsFor(eventId).length >= 2 ? requestsFor(eventId) : undefined,
      );
      const marker = await afterLaterEvent(store, receiver);
      await waitFor('the marker at both keys', () => requestsFor(marker).length === 2);
      expect(requestsFor(eventId)).toHaveLength(2);
      expect(
        requests.some((q) => {
          try {
            verify(late.webhook_secret, q);
            return true;
          } catch {
            return false;
          }
        }),
      ).toBe(true);
      expect((await deliveryOf(first.id, eventId))!.attempts).toBe(1);
    });

    it('answers not_found for an event the store does not have', async () => {
      const store = await createStore();
      expect(await adminError('webhooks replay', { store, event: newEventId() })).toMatchObject({
        code: 'not_found',
        field: 'event',
      });
    });
  });
});
