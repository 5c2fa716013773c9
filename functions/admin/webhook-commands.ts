import * as v from 'valibot';
import { parse } from '#domain/validation.ts';
import { DomainError } from '#domain/errors.ts';
import { listKeysOfStore, requireKey, updateKeyWebhook } from '#db/key/repo.ts';
import { publicKey, generateWebhookSecret } from '#domain/key/api-key.ts';
import { listDeliveries, startRedelivery } from '#db/webhook/delivery.repo.ts';
import { getEndpoint, getEndpoints } from '#db/webhook/endpoint.repo.ts';
import { endpointView } from '#domain/webhook/endpoint.ts';
import { redeliverSince, RedeliverState, Since } from './bulk-redeliver.ts';
import { replayOutboxEvent } from '#db/event/outbox.repo.ts';
import { deliveryView, WEBHOOK_SECRET_GRACE_SECONDS } from '#domain/webhook/delivery.ts';
import { pingWebhook } from '#functions/webhooks/ping.ts';
import { encryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import type { AdminCommand } from './commands.ts';
import { IntegerArg, KeyIdArg, StoreIdArg } from './args.ts';
import { requireStore } from '#app/stores.ts';
import { readEventLog } from '#db/event/log.repo.ts';

const KeyId = KeyIdArg;
const EventId = v.pipe(v.string(), v.regex(/^evt_[A-Za-z0-9]{1,64}$/, 'must be an event id like evt_0123abcd...'));
const Limit = v.optional(IntegerArg(1, 10_000));

/** docs/contract.md#admin-cli, docs/contract.md#webhooks: the delivery log, redelivery, test delivery and webhook secret rotation. */
export const webhookCommands: Record<string, AdminCommand> = {
  'webhooks deliveries': async (args) => {
    const a = parse(v.strictObject({ id: KeyId, limit: Limit }), args);
    await requireKey(a.id);
    const [log, endpoint] = await Promise.all([listDeliveries(a.id), getEndpoint(a.id)]);
    return { endpoint: endpointView(endpoint), data: log.slice(0, a.limit ?? log.length).map(deliveryView) };
  },

  // One event (--event), or every delivery created since a time (--since, optionally one --state).
  'webhooks redeliver': async (args) => {
    const a = parse(
      v.strictObject({
        id: KeyId,
        event: v.optional(EventId),
        since: v.optional(Since),
        state: v.optional(RedeliverState),
      }),
      args,
    );
    if ((a.event === undefined) === (a.since === undefined)) {
      throw new DomainError('validation_failed', 'give either --event EVENT_ID or --since TIME', 'event');
    }
    if (a.event !== undefined && a.state !== undefined)
      throw new DomainError('validation_failed', '--state goes with --since only', 'state');
    await requireKey(a.id);
    if (a.event !== undefined) return deliveryView(await startRedelivery(a.id, a.event, new Date().toISOString()));
    return redeliverSince(a.id, a.since as string, a.state);
  },

  // Every key of a store with its webhook endpoint's state (active or parked, and why).
  'webhooks endpoints': async (args) => {
    const a = parse(v.strictObject({ store: v.pipe(v.string(), v.minLength(1)) }), args);
    const withUrl = (await listKeysOfStore(a.store, false)).filter((k) => k.webhook_url);
    const endpoints = await getEndpoints(withUrl.map((k) => k.id));
    return {
      data: withUrl.map((k) => ({
        key_id: k.id,
        name: k.name,
        webhook_url: k.webhook_url,
        key_status: k.status,
        endpoint: endpointView(endpoints.get(k.id)!),
      })),
    };
  },

  // The store's whole event log (every family, every origin) from sequence `after` + 1, for an
  // operator checking what a receiver should have seen; `next_after` continues it.
  'webhooks events': async (args) => {
    const a = parse(
      v.strictObject({
        store: StoreIdArg,
        after: v.optional(IntegerArg(0, Number.MAX_SAFE_INTEGER), 0),
        limit: v.optional(IntegerArg(1, 100), 50),
      }),
      args,
    );
    await requireStore(a.store);
    const page = await readEventLog(a.store, a.after, a.limit, Math.floor(Date.now() / 1000));
    if (page.expired)
      throw new DomainError(
        'cursor_expired',
        `events after ${a.after} are past the 30-day retention; start from --after 0`,
        'after',
      );
    const data = page.events.map((e) => ({
      id: e.event_id,
      sequence: e.sequence,
      type: e.event_type,
      timestamp: e.created_at,
      origin: e.origin,
      owner_key_id: e.owner_key_id,
      data: e.payload.data,
    }));
    return { data, next_after: page.more ? data.at(-1)!.sequence : null };
  },

  'webhooks ping': async (args) => {
    const a = parse(v.strictObject({ id: KeyId }), args);
    return pingWebhook(await requireKey(a.id));
  },

  'webhooks replay': async (args) => {
    const a = parse(v.strictObject({ store: v.pipe(v.string(), v.minLength(1)), event: EventId }), args);
    return replayOutboxEvent(a.store, a.event, new Date());
  },

  'keys rotate-webhook-secret': async (args) => {
    const a = parse(v.strictObject({ id: KeyId }), args);
    const key = await requireKey(a.id);
    if (key.status === 'revoked') throw new DomainError('invalid_transition', `key ${a.id} is revoked`, 'id');
    const secret = generateWebhookSecret();
    const graceEnds = new Date(Date.now() + WEBHOOK_SECRET_GRACE_SECONDS * 1000).toISOString();
    // A second rotation within the grace period drops the oldest secret: at most two are live.
    const rotated = await updateKeyWebhook(
      a.id,
      // Sealed before it is written; the previous one moves as stored (the admin never opens a secret).
      {
        webhook_secret: await encryptWebhookSecret(secret),
        previous_webhook_secret: key.webhook_secret,
        previous_webhook_secret_expires_at: graceEnds,
      },
      key.webhook_secret,
    );
    return { ...publicKey(rotated), webhook_secret: secret, previous_webhook_secret_expires_at: graceEnds };
  },
};
