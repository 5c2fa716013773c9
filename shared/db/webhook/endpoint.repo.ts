import type { RequestContext } from '#shared/context.ts';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { batchGet, isConditionalCheckFailed, itemKey, type Item } from '../core/helpers.ts';
import { activeEndpoint, type Endpoint } from '#domain/webhook/endpoint.ts';

/**
 * The state of a key's webhook endpoint (domain/webhook/endpoint.ts), one item beside the key's
 * delivery log. No item: active, never failed. Written only on a failed attempt, on the first
 * success after failures, and when parking or probing, so a healthy endpoint costs no write.
 */

export function toEndpoint(keyId: number, item: Item | undefined): Endpoint {
  if (!item) return activeEndpoint(keyId);
  return {
    key_id: keyId,
    state: item.state ?? 'active',
    since: item.since ?? null,
    reason: item.reason ?? null,
    consecutive_failures: item.consecutive_failures ?? 0,
    first_failure_at: item.first_failure_at ?? null,
    last_failure_at: item.last_failure_at ?? null,
    last_error: item.last_error ?? null,
    next_probe_at: item.next_probe_at ?? null,
    probe_lease_until: item.probe_lease_until ?? null,
    attempt_slots: slotsOf(item),
  };
}

/** The slow lane's attempt slots are top-level attributes `slot_0`, `slot_1`, … holding their lease end. */
const SLOT = /^slot_(\d+)$/;
const slotName = (slot: number) => `slot_${slot}`;

function slotsOf(item: Item): Record<number, string> {
  const slots: Record<number, string> = {};
  for (const [name, value] of Object.entries(item)) {
    const m = SLOT.exec(name);
    if (m && typeof value === 'string') slots[Number(m[1])] = value;
  }
  return slots;
}

function namesIn(text: string, slot?: number): Record<string, string> | undefined {
  const names: Record<string, string> = { '#state': 'state', '#type': 'type' };
  if (slot !== undefined) names['#slot'] = slotName(slot);
  const used = Object.entries(names).filter(([n]) => text.includes(n));
  return used.length ? Object.fromEntries(used) : undefined;
}

export async function getEndpoint(ctx: RequestContext, keyId: number): Promise<Endpoint> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.webhookEndpoint(keyId), ConsistentRead: true }),
  );
  return toEndpoint(keyId, out.Item);
}

export async function getEndpoints(ctx: RequestContext, keyIds: number[]): Promise<Map<number, Endpoint>> {
  const found = await batchGet(ctx, keyIds.map(keys.webhookEndpoint));
  return new Map(keyIds.map((id) => [id, toEndpoint(id, found.get(itemKey(keys.webhookEndpoint(id))))]));
}

async function update(
  ctx: RequestContext,
  keyId: number,
  expression: string,
  values: Record<string, unknown>,
  condition?: string,
  slot?: number,
): Promise<Endpoint | undefined> {
  try {
    const out = await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.webhookEndpoint(keyId),
        UpdateExpression: expression,
        ...(condition ? { ConditionExpression: condition } : {}),
        ExpressionAttributeNames: namesIn(`${expression} ${condition ?? ''}`, slot),
        ExpressionAttributeValues: Object.keys(values).length ? values : undefined,
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toEndpoint(keyId, out.Attributes);
  } catch (err) {
    if (isConditionalCheckFailed(err)) return undefined;
    throw err;
  }
}

/** One more failed attempt in a row; the state after it. `slot`: the attempt's slow-lane slot, given back in the same write. */
export async function recordEndpointFailure(
  ctx: RequestContext,
  keyId: number,
  now: string,
  error: string | null,
  slot?: number,
): Promise<Endpoint> {
  const out = await update(
    ctx,
    keyId,
    'SET #state = if_not_exists(#state, :active), #type = :type, key_id = :k, first_failure_at = if_not_exists(first_failure_at, :now), ' +
      `last_failure_at = :now, last_error = :error ADD consecutive_failures :one${slot === undefined ? '' : ' REMOVE #slot'}`,
    { ':active': 'active', ':type': ENTITY.webhookEndpoint, ':k': keyId, ':now': now, ':error': error, ':one': 1 },
    undefined,
    slot,
  );
  return out as Endpoint;
}

/**
 * A success: the failure streak is over (only written when there was one), which closes the
 * circuit; `slot`, the attempt's slow-lane slot, is given back in the same write.
 */
export async function recordEndpointSuccess(ctx: RequestContext, keyId: number, slot?: number): Promise<void> {
  await update(
    ctx,
    keyId,
    `SET consecutive_failures = :zero REMOVE first_failure_at${slot === undefined ? '' : ', #slot'}`,
    { ':zero': 0, ':active': 'active' },
    '#state = :active',
    slot,
  );
}

/**
 * Takes slow-lane attempt slot `slot` until `until` if it is free (never taken, or its lease has
 * ended); false when another attempt holds it. The lease outlives any attempt (the signer's own
 * timeout ends it first), so only a crashed attempt's slot is ever freed by expiry; every other is
 * given back by the attempt's own write of its outcome.
 */
export async function takeAttemptSlot(
  ctx: RequestContext,
  keyId: number,
  slot: number,
  now: string,
  until: string,
): Promise<boolean> {
  const out = await update(
    ctx,
    keyId,
    'SET #slot = :until, #type = :type, key_id = :k',
    { ':until': until, ':now': now, ':type': ENTITY.webhookEndpoint, ':k': keyId },
    'attribute_not_exists(#slot) OR #slot <= :now',
    slot,
  );
  return out !== undefined;
}

/** Gives back a slow-lane slot taken for an attempt that was not made (an ordered run found nothing to attempt). */
export async function giveBackAttemptSlot(ctx: RequestContext, keyId: number, slot: number): Promise<void> {
  await update(ctx, keyId, 'REMOVE #slot', {}, undefined, slot);
}

/** Parks an active endpoint; undefined when it was parked already (someone else won). */
export async function parkEndpoint(
  ctx: RequestContext,
  keyId: number,
  now: string,
  reason: string,
  nextProbeAt: string,
): Promise<Endpoint | undefined> {
  return update(
    ctx,
    keyId,
    'SET #state = :parked, since = :now, reason = :reason, next_probe_at = :probe REMOVE probe_lease_until',
    { ':parked': 'parked', ':active': 'active', ':now': now, ':reason': reason, ':probe': nextProbeAt },
    '#state = :active',
  );
}

/** The probe lease: one probe or drain per endpoint at a time; undefined when another holds it. */
export async function claimProbe(
  ctx: RequestContext,
  keyId: number,
  now: string,
  until: string,
): Promise<Endpoint | undefined> {
  return update(
    ctx,
    keyId,
    'SET probe_lease_until = :until',
    { ':parked': 'parked', ':now': now, ':until': until },
    '#state = :parked AND (attribute_not_exists(probe_lease_until) OR probe_lease_until < :now)',
  );
}

/** Still parked: the next probe at `at`, the lease given back. `previous` guards a self-heal race. */
export async function scheduleProbe(
  ctx: RequestContext,
  keyId: number,
  at: string,
  error?: string,
  previous?: string | null,
): Promise<Endpoint | undefined> {
  const values: Record<string, unknown> = { ':parked': 'parked', ':at': at };
  let set = 'SET next_probe_at = :at';
  if (error !== undefined) {
    set += ', last_error = :error, last_failure_at = :now ADD consecutive_failures :one';
    Object.assign(values, { ':error': error, ':now': new Date().toISOString(), ':one': 1 });
  }
  let condition = '#state = :parked';
  if (previous !== undefined) {
    condition += ' AND next_probe_at = :previous';
    values[':previous'] = previous;
  }
  return update(ctx, keyId, `${set} REMOVE probe_lease_until`, values, condition);
}

/** The probe succeeded and the backlog is drained: active again, streak reset. */
export async function resumeEndpoint(ctx: RequestContext, keyId: number, now: string): Promise<Endpoint | undefined> {
  return update(
    ctx,
    keyId,
    'SET #state = :active, since = :now, consecutive_failures = :zero REMOVE reason, next_probe_at, probe_lease_until, first_failure_at',
    { ':active': 'active', ':parked': 'parked', ':now': now, ':zero': 0 },
    '#state = :parked',
  );
}
