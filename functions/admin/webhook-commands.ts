import * as v from 'valibot';
import { validate } from '#domain/validation.ts';
import { activeKey } from '#app/admin-keys.ts';
import {
  deliveryLog,
  endpointsOfStore,
  redeliverEvent,
  redeliverSince,
  replayEvent,
  rotateWebhookSecret,
  storeEventLog,
} from '#app/admin-webhooks.ts';
import { publicKey } from '#domain/key/api-key.ts';
import { targetName } from '#domain/key/destination.ts';
import { endpointView } from '#domain/webhook/endpoint.ts';
import { deliveryView } from '#domain/webhook/delivery.ts';
import { pingWebhook } from '#functions/webhooks/ping.ts';
import { encryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import type { AdminCommand } from './commands.ts';
import { shown } from './answer.ts';
import { isRefused, refused } from '#domain/outcome.ts';
import { IntegerArg, KeyIdArg, RedeliverState, Since, StoreIdArg } from './args.ts';
import { isTracked } from '#domain/event/event.ts';

const EventId = v.pipe(v.string(), v.regex(/^evt_[A-Za-z0-9]{1,64}$/, 'must be an event id like evt_0123abcd...'));
const Limit = v.optional(IntegerArg(1, 10_000));

/** docs/contract.md#admin-cli, docs/contract.md#webhooks: the delivery log, redelivery, test delivery and webhook secret rotation. */
export const webhookCommands: Record<string, AdminCommand> = {
  'webhooks deliveries': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg, limit: Limit }), args);
    if (isRefused(a)) return a;
    return shown(await deliveryLog(ctx, a.id), ({ deliveries, endpoint }) => ({
      endpoint: endpointView(endpoint),
      data: deliveries.slice(0, a.limit ?? deliveries.length).map(deliveryView),
    }));
  },

  // One event (--event), or every delivery created since a time (--since, optionally one --state).
  'webhooks redeliver': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        id: KeyIdArg,
        event: v.optional(EventId),
        since: v.optional(Since),
        state: v.optional(RedeliverState),
      }),
      args,
    );
    if (isRefused(a)) return a;
    if ((a.event === undefined) === (a.since === undefined))
      return refused('validation_failed', 'give either --event EVENT_ID or --since TIME', 'event');
    if (a.event !== undefined && a.state !== undefined)
      return refused('validation_failed', '--state goes with --since only', 'state');
    if (a.event !== undefined) return shown(await redeliverEvent(ctx, a.id, a.event), deliveryView);
    return redeliverSince(ctx, a.id, a.since as string, a.state);
  },

  // Every key of a store with its webhook endpoint's state (active or parked, and why).
  'webhooks endpoints': async (ctx, args) => {
    const a = validate(v.strictObject({ store: v.pipe(v.string(), v.minLength(1)) }), args);
    if (isRefused(a)) return a;
    return {
      data: (await endpointsOfStore(ctx, a.store)).map(({ key, endpoint }) => ({
        key_id: key.id,
        name: key.name,
        webhook_url: key.webhook_url,
        destination: key.destination && { kind: key.destination.kind, target: targetName(key.destination) },
        key_status: key.status,
        endpoint: endpointView(endpoint),
      })),
    };
  },

  // The store's whole event log (every family, every origin) from sequence `after` + 1, for an
  // operator checking what a receiver should have seen; `next_after` continues it.
  'webhooks events': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        store: StoreIdArg,
        after: v.optional(IntegerArg(0, Number.MAX_SAFE_INTEGER), 0),
        limit: v.optional(IntegerArg(1, 100), 50),
      }),
      args,
    );
    if (isRefused(a)) return a;
    const page = await storeEventLog(ctx, a.store, a.after, a.limit);
    if (isRefused(page)) return page;
    const data = page.events.map((e) => ({
      id: e.event_id,
      sequence: e.sequence,
      type: e.event_type,
      timestamp: e.created_at,
      origin: e.origin,
      owner_key_id: e.owner_key_id,
      ...(isTracked(e.event_type) ? { changed_fields: e.payload.changed_fields ?? null } : {}),
      data: e.payload.data,
    }));
    return { data, next_after: page.more ? data.at(-1)!.sequence : null };
  },

  'webhooks ping': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg }), args);
    if (isRefused(a)) return a;
    const key = await activeKey(ctx, a.id);
    return isRefused(key) ? key : pingWebhook(key);
  },

  'webhooks replay': async (ctx, args) => {
    const a = validate(v.strictObject({ store: v.pipe(v.string(), v.minLength(1)), event: EventId }), args);
    if (isRefused(a)) return a;
    return replayEvent(ctx, a.store, a.event);
  },

  'keys rotate-webhook-secret': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg }), args);
    if (isRefused(a)) return a;
    return shown(await rotateWebhookSecret(ctx, a.id, encryptWebhookSecret), ({ record, secret, graceEnds }) => ({
      ...publicKey(record),
      webhook_secret: secret,
      previous_webhook_secret_expires_at: graceEnds,
    }));
  },
};
