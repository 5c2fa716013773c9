import type { RequestContext } from '#shared/context.ts';
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import {
  batchGet,
  isConditionalCheckFailed,
  itemFromError,
  itemKey,
  namedTransaction,
  queryAll,
  type Item,
} from '../core/helpers.ts';
import { REDELIVERY_KIND } from '../event/outbox-stream.ts';
import { DELIVERY_TTL_SECONDS, type Delivery, type DeliveryState } from '#domain/webhook/delivery.ts';

/**
 * The webhook delivery log: one item per (key, event) under the key's partition, 30-day TTL.
 * It is also the fan-out's idempotency record (created with a condition before the queue message
 * is sent) and the signer's durable retry state.
 */

const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

export function toDelivery(item: Item): Delivery {
  return {
    key_id: item.key_id,
    event_id: item.event_id,
    event_type: item.event_type,
    store_id: item.store_id,
    state: item.state,
    attempts: item.attempts ?? 0,
    round: item.round ?? 0,
    round_attempts: item.round_attempts ?? 0,
    queued_round: item.queued_round ?? null,
    last_status_code: item.last_status_code ?? null,
    last_error: item.last_error ?? null,
    created_at: item.created_at,
    updated_at: item.updated_at,
    next_attempt_at: item.next_attempt_at ?? null,
    last_attempt_at: item.last_attempt_at ?? null,
    delivered_at: item.delivered_at ?? null,
    parked_at: item.parked_at ?? null,
    body: item.body ?? '',
  };
}

/**
 * Creates the delivery unless it exists; hands back the existing one otherwise (a replayed
 * stream record), in the same round trip.
 */
export async function createDelivery(
  ctx: RequestContext,
  d: Delivery,
): Promise<{ created: true } | { created: false; existing: Delivery }> {
  try {
    await send(
      ctx,
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.delivery(d.key_id, d.event_id),
          type: ENTITY.delivery,
          ttl: epochSeconds(d.created_at) + DELIVERY_TTL_SECONDS,
          ...d,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { created: true };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const existing = itemFromError(err.Item);
    if (!existing) throw err;
    return { created: false, existing: toDelivery(existing) };
  }
}

export async function getDelivery(ctx: RequestContext, keyId: number, eventId: string): Promise<Delivery | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.delivery(keyId, eventId), ConsistentRead: true }),
  );
  return out.Item ? toDelivery(out.Item) : undefined;
}

/** Several deliveries of one key by event id, in one round trip per 100 (strongly consistent); the missing are absent. */
export async function getDeliveries(
  ctx: RequestContext,
  keyId: number,
  eventIds: readonly string[],
): Promise<Map<string, Delivery>> {
  const found = await batchGet(
    ctx,
    eventIds.map((id) => keys.delivery(keyId, id)),
  );
  const out = new Map<string, Delivery>();
  for (const id of eventIds) {
    const item = found.get(itemKey(keys.delivery(keyId, id)));
    if (item) out.set(id, toDelivery(item));
  }
  return out;
}

/** Records that the queue message of `round` was sent; a replay of the same round then sends nothing. */
export async function markQueued(ctx: RequestContext, keyId: number, eventId: string, round: number): Promise<void> {
  try {
    await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.delivery(keyId, eventId),
        UpdateExpression: 'SET queued_round = :r',
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(queued_round) OR queued_round < :r OR queued_round = :null)',
        ExpressionAttributeValues: { ':r': round, ':null': null },
      }),
    );
  } catch (err) {
    // A later round was queued meanwhile, or the record expired: nothing to record.
    if (!isConditionalCheckFailed(err)) throw err;
  }
}

/** What a claim on an attempt came to: taken; held by another copy until `until`; or no attempt to make. */
export type AttemptClaim = { kind: 'taken' } | { kind: 'held'; until: string } | { kind: 'gone' };

/**
 * Takes the attempt of `round` for one signer until `until` (a lease past the POST's timeout): a
 * second copy of the same message, run at the same moment (SQS delivers at least once, and both
 * the stream and the express lane may queue a delivery), finds it `held`. The claim names its
 * round, so a redelivery's new round is never held by an attempt of the old one. The outcome
 * write (`updateDelivery`) gives it back; a signer that died holding it loses it when the lease
 * ends. `gone`: the delivery expired, moved to another round or is no longer pending.
 */
export async function claimAttempt(
  ctx: RequestContext,
  keyId: number,
  eventId: string,
  round: number,
  now: string,
  until: string,
): Promise<AttemptClaim> {
  try {
    await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.delivery(keyId, eventId),
        UpdateExpression: 'SET claimed_until = :until, claimed_round = :round',
        ConditionExpression:
          'attribute_exists(pk) AND #round = :round AND #state = :pending AND ' +
          '(attribute_not_exists(claimed_until) OR claimed_until < :now OR claimed_round <> :round)',
        ExpressionAttributeNames: { '#round': 'round', '#state': 'state' },
        ExpressionAttributeValues: { ':until': until, ':round': round, ':pending': 'pending', ':now': now },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { kind: 'taken' };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const old = itemFromError(err.Item);
    const live = old && old.round === round && old.state === 'pending' && typeof old.claimed_until === 'string';
    return live ? { kind: 'held', until: old.claimed_until as string } : { kind: 'gone' };
  }
}

/**
 * Gives back an attempt claimed and not completed (the slow lane had no slot for it, or a platform
 * error stopped it): the next receive need not wait out the lease.
 */
export async function releaseAttempt(
  ctx: RequestContext,
  keyId: number,
  eventId: string,
  round: number,
): Promise<void> {
  try {
    await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.delivery(keyId, eventId),
        UpdateExpression: 'REMOVE claimed_until, claimed_round',
        ConditionExpression: 'attribute_exists(pk) AND #round = :round',
        ExpressionAttributeNames: { '#round': 'round' },
        ExpressionAttributeValues: { ':round': round },
      }),
    );
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
  }
}

export interface DeliveryUpdate {
  state: DeliveryState;
  /** True when an HTTP attempt was made (counts towards `attempts` and `round_attempts`). */
  attempted: boolean;
  last_status_code?: number | null;
  last_error?: string | null;
  next_attempt_at: string | null;
  now: string;
  /** Left pending because the endpoint is parked (not attempted until a probe drains it). */
  parked?: boolean;
}

/**
 * Applies the outcome of one step of `round`. Returns the record after the change, or undefined
 * when the round is no longer current (a redelivery started a new one): the caller's message is
 * stale.
 */
export async function updateDelivery(
  ctx: RequestContext,
  keyId: number,
  eventId: string,
  round: number,
  u: DeliveryUpdate,
): Promise<Delivery | undefined> {
  const sets = ['#state = :state', 'updated_at = :now', 'next_attempt_at = :next', 'parked_at = :parked'];
  const values: Record<string, unknown> = {
    ':state': u.state,
    ':now': u.now,
    ':next': u.next_attempt_at,
    ':round': round,
    ':parked': u.parked ? u.now : null,
  };
  if (u.attempted) {
    sets.push('attempts = attempts + :one', 'round_attempts = round_attempts + :one', 'last_attempt_at = :now');
    values[':one'] = 1;
  }
  if (u.last_status_code !== undefined) {
    sets.push('last_status_code = :code');
    values[':code'] = u.last_status_code;
  }
  if (u.last_error !== undefined) {
    sets.push('last_error = :error');
    values[':error'] = u.last_error;
  }
  if (u.state === 'delivered') sets.push('delivered_at = :now');
  try {
    const out = await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.delivery(keyId, eventId),
        // The attempt's outcome gives its claim back (claimAttempt).
        UpdateExpression: `SET ${sets.join(', ')} REMOVE claimed_until, claimed_round`,
        ConditionExpression: 'attribute_exists(pk) AND #round = :round',
        ExpressionAttributeNames: { '#state': 'state', '#round': 'round' },
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return out.Attributes ? toDelivery(out.Attributes) : undefined;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return undefined;
    throw err;
  }
}

export const LOG_FIELDS = [
  'key_id',
  'event_id',
  'event_type',
  'store_id',
  '#state',
  'attempts',
  '#round',
  'round_attempts',
  'queued_round',
  'last_status_code',
  'last_error',
  'created_at',
  'updated_at',
  'next_attempt_at',
  'last_attempt_at',
  'delivered_at',
  'parked_at',
];

/** The key's delivery log, newest first, without the bodies. */
export async function listDeliveries(ctx: RequestContext, keyId: number): Promise<Delivery[]> {
  const items = await queryAll(ctx, {
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.key(keyId).pk, ':prefix': keys.deliveryPrefix },
    ExpressionAttributeNames: { '#state': 'state', '#round': 'round' },
    ProjectionExpression: LOG_FIELDS.join(', '),
  });
  // Event ids are random, so the sort key says nothing about age; a key's 30-day log is small.
  return items
    .map(toDelivery)
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || b.event_id.localeCompare(a.event_id));
}

/** Deliveries left pending while the key's endpoint is parked, oldest first: the order a drain takes. */
export async function listParkedDeliveries(ctx: RequestContext, keyId: number): Promise<Delivery[]> {
  const parked = (await listDeliveries(ctx, keyId)).filter((d) => d.state === 'pending' && d.parked_at !== null);
  return parked.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.event_id.localeCompare(b.event_id));
}

/** How long a redelivery request waits in the table for the stream (it is read within seconds). */
const REDELIVERY_REQUEST_TTL_SECONDS = 24 * 60 * 60;

/**
 * How a redelivery start ended: the delivery in its new round; `no_delivery`: the key has no
 * delivery of that event; `raced`: another redelivery of it started a round first. Nothing is
 * written but in `started`.
 */
export type RedeliveryStart = { kind: 'started'; delivery: Delivery } | { kind: 'no_delivery' } | { kind: 'raced' };

/**
 * Starts a new round of a delivery and, in the same transaction, writes the request that the
 * stream carries to the fan-out, which queues it: the admin needs no queue access, and a crash
 * cannot leave a pending round without its message.
 */
export async function startRedelivery(
  ctx: RequestContext,
  keyId: number,
  eventId: string,
  now: string,
): Promise<RedeliveryStart> {
  const current = await getDelivery(ctx, keyId, eventId);
  if (!current) return { kind: 'no_delivery' };
  const round = current.round + 1;
  const tx = namedTransaction([
    [
      'round',
      {
        Update: {
          TableName: tableName(),
          Key: keys.delivery(keyId, eventId),
          UpdateExpression:
            'SET #round = :next, round_attempts = :zero, #state = :pending, next_attempt_at = :now, updated_at = :now, parked_at = :null',
          ConditionExpression: '#round = :round',
          ExpressionAttributeNames: { '#round': 'round', '#state': 'state' },
          ExpressionAttributeValues: {
            ':next': round,
            ':round': current.round,
            ':zero': 0,
            ':pending': 'pending',
            ':now': now,
            ':null': null,
          },
        },
      },
    ],
    [
      'request',
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.redeliveryRequest(keyId, eventId, round),
            type: ENTITY.outbox,
            kind: REDELIVERY_KIND,
            event_id: eventId,
            key_id: keyId,
            round,
            created_at: now,
            ttl: epochSeconds(now) + REDELIVERY_REQUEST_TTL_SECONDS,
          },
        },
      },
    ],
  ]);
  try {
    await send(ctx, new TransactWriteCommand({ TransactItems: tx.items }));
  } catch (err) {
    if (tx.cancelledBy(err)?.failed('round')) return { kind: 'raced' };
    throw err;
  }
  return {
    kind: 'started',
    delivery: {
      ...current,
      round,
      round_attempts: 0,
      state: 'pending',
      next_attempt_at: now,
      updated_at: now,
      parked_at: null,
    },
  };
}
