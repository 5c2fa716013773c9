import type { RequestContext } from '#shared/context.ts';
import { readEventLog } from '#db/event/log.repo.ts';
import { replayOutboxEvent } from '#db/event/outbox.repo.ts';
import { listKeysOfStore } from '#db/key/repo.ts';
import { listDeliveries, startRedelivery } from '#db/webhook/delivery.repo.ts';
import { getEndpoint, getEndpoints } from '#db/webhook/endpoint.repo.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import { generateWebhookSecret, type KeyRecord } from '#domain/key/api-key.ts';
import { deliveryView, WEBHOOK_SECRET_GRACE_SECONDS, type Delivery } from '#domain/webhook/delivery.ts';
import type { Endpoint } from '#domain/webhook/endpoint.ts';
import type { SealSecret } from './admin-keys.ts';
import { activeKey, changeWebhook, existingKey } from './key-changes.ts';
import { requireStore } from './stores.ts';

/**
 * The admin's webhook commands (functions/admin/webhook-commands.ts validates their arguments and
 * shapes their answers): the delivery log, redelivery, endpoints, the event log, outbox replay and
 * webhook secret rotation. The test delivery is the signer's own POST (functions/webhooks/ping.ts).
 */

/** One call redelivers at most this many (oldest first); the answer says where to go on from. */
const BULK_REDELIVER_LIMIT = 500;

/** An existing key's deliveries, newest first, and its endpoint's state. */
export async function deliveryLog(
  ctx: RequestContext,
  keyId: number,
): Promise<{ deliveries: Delivery[]; endpoint: Endpoint } | Refused> {
  const key = await existingKey(ctx, keyId);
  if (isRefused(key)) return key;
  const [deliveries, endpoint] = await Promise.all([listDeliveries(ctx, keyId), getEndpoint(ctx, keyId)]);
  return { deliveries, endpoint };
}

/**
 * A new round of one delivery of an active key (same webhook-id and body); refused when the key
 * has no delivery of the event, or another redelivery of it started a round first.
 */
export async function redeliverEvent(ctx: RequestContext, keyId: number, eventId: string): Promise<Delivery | Refused> {
  // Nothing is sent for a revoked key any more, so a redelivery is refused rather than started to
  // fail (a key revoked after this check fails its round, as docs/webhooks.md, "Delivery log and
  // redelivery", says of pending deliveries).
  const key = await activeKey(ctx, keyId);
  if (isRefused(key)) return key;
  const started = await startRedelivery(ctx, keyId, eventId, new Date().toISOString());
  switch (started.kind) {
    case 'started':
      return started.delivery;
    case 'no_delivery':
      return refused('not_found', `key ${keyId} has no delivery of event ${eventId}`, 'event');
    case 'raced':
      return refused('conflict', `delivery of event ${eventId} was redelivered concurrently; try again`, 'event');
  }
}

/**
 * Every delivery of an active key created at or after `since` (and in `state`, when given) starts
 * a new round, oldest first, each as `redeliverEvent` does it. A delivery redelivered concurrently
 * by someone else is skipped, not an error: it is under way.
 */
export async function redeliverSince(
  ctx: RequestContext,
  keyId: number,
  since: string,
  state: 'pending' | 'delivered' | 'failed' | undefined,
) {
  const key = await activeKey(ctx, keyId);
  if (isRefused(key)) return key;
  const chosen = (await listDeliveries(ctx, keyId))
    .filter((d) => d.created_at >= since && (state === undefined || d.state === state))
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.event_id.localeCompare(b.event_id));
  const batch = chosen.slice(0, BULK_REDELIVER_LIMIT);
  const now = new Date().toISOString();
  const started = [];
  const skipped: string[] = [];
  for (const d of batch) {
    const outcome = await startRedelivery(ctx, keyId, d.event_id, now);
    if (outcome.kind === 'started') started.push(deliveryView(outcome.delivery));
    else skipped.push(d.event_id);
  }
  const rest = chosen[BULK_REDELIVER_LIMIT];
  return {
    redelivered: started.length,
    skipped,
    // More than one call's worth: run again with this --since.
    next_since: rest ? rest.created_at : null,
    data: started,
  };
}

/** Every key of a store that has a destination (a webhook URL, a queue, a bus), with its endpoint's state (active or parked, and why). */
export async function endpointsOfStore(
  ctx: RequestContext,
  storeId: string,
): Promise<{ key: KeyRecord; endpoint: Endpoint }[]> {
  const withDestination = (await listKeysOfStore(ctx, storeId, false)).filter((k) => k.destination);
  const endpoints = await getEndpoints(
    ctx,
    withDestination.map((k) => k.id),
  );
  return withDestination.map((key) => ({ key, endpoint: endpoints.get(key.id)! }));
}

/**
 * A page of an existing store's whole event log (every family, every origin) after sequence
 * `after`; `cursor_expired` naming `after` when the events after it are past retention.
 */
export async function storeEventLog(ctx: RequestContext, storeId: string, after: number, limit: number) {
  const store = await requireStore(ctx, storeId);
  if (isRefused(store)) return store;
  const page = await readEventLog(ctx, storeId, after, limit, Math.floor(Date.now() / 1000));
  if (page.expired)
    return refused(
      'cursor_expired',
      `events after ${after} are past the 30-day retention; start from --after 0`,
      'after',
    );
  return { events: page.events, more: page.more };
}

/** Runs a kept event of the store through the fan-out again; refused when the store has no such event. */
export async function replayEvent(
  ctx: RequestContext,
  storeId: string,
  eventId: string,
): Promise<{ event_id: string; replayed_at: string } | Refused> {
  const replayed = await replayOutboxEvent(ctx, storeId, eventId, new Date());
  if (replayed.kind === 'no_event')
    return refused('not_found', `store ${storeId} has no event ${eventId} (events are kept 30 days)`, 'event');
  return { event_id: replayed.event_id, replayed_at: replayed.replayed_at };
}

/**
 * A new webhook secret for an active key, sealed by `seal` before it is written; the previous one
 * stays valid for the grace period. A second rotation within it drops the oldest: at most two are live.
 */
export async function rotateWebhookSecret(
  ctx: RequestContext,
  keyId: number,
  seal: SealSecret,
): Promise<{ record: KeyRecord; secret: string; graceEnds: string } | Refused> {
  const key = await activeKey(ctx, keyId);
  if (isRefused(key)) return key;
  const secret = generateWebhookSecret();
  const graceEnds = new Date(Date.now() + WEBHOOK_SECRET_GRACE_SECONDS * 1000).toISOString();
  const record = await changeWebhook(
    ctx,
    keyId,
    // The previous one moves as stored (the admin never opens a secret).
    {
      webhook_secret: await seal(secret),
      previous_webhook_secret: key.webhook_secret,
      previous_webhook_secret_expires_at: graceEnds,
    },
    key.webhook_secret,
  );
  return isRefused(record) ? record : { record, secret, graceEnds };
}
