import type { RequestContext } from '#shared/context.ts';
import { config } from '#shared/config.ts';
import { updateDelivery } from '#db/webhook/delivery.repo.ts';
import {
  parkEndpoint,
  recordEndpointFailure,
  recordEndpointSuccess,
  scheduleProbe,
  takeAttemptSlot,
} from '#db/webhook/endpoint.repo.ts';
import type { Delivery } from '#domain/webhook/delivery.ts';
import { freeSlot, parkReason, shouldPark, type Endpoint } from '#domain/webhook/endpoint.ts';
import { hopDelaySeconds } from '#domain/webhook/retry.ts';
import { emitMetrics, MetricUnit } from '#shared/metrics.ts';
import { sendDeliveryMessage } from '#queue/sqs.ts';
import { log } from '#shared/log.ts';
import type { DeliverableKey, PostResult } from '#domain/webhook/deliverable.ts';
import { targetName } from '#domain/key/destination.ts';
import { recordDelivery } from './delivery-metrics.ts';
import type { SignerPorts } from './webhook-delivery.ts';

/**
 * Endpoint parking (docs/webhooks.md, "Parked endpoints"): every failed attempt extends the key's
 * failure streak; a streak long and old enough parks the endpoint. A parked endpoint's deliveries
 * stay pending without attempts (no hops through the retry schedule) until a probe (webhook-probe.ts)
 * finds it answering and drains them oldest first.
 */

const probeDueAt = (nowMs: number) => new Date(nowMs + config().webhookProbeIntervalSeconds * 1000).toISOString();

/**
 * Queues the probe message for `at` (a long wait travels as delayed hops, like a long retry). Probes
 * travel in the slow lane: a parked endpoint is one that kept failing, so its probe (up to a
 * POST's timeout, a drain up to 15 s) takes no execution of the fast lane.
 */
export async function sendProbe(keyId: number, at: string): Promise<void> {
  const seconds = hopDelaySeconds((Date.parse(at) - Date.now()) / 1000, config().webhookQueueWaitLimitSeconds);
  await sendDeliveryMessage({ kind: 'probe', key_id: keyId, due_at: at }, seconds, 'slow');
}

/**
 * How long an attempt holds what it claimed (its delivery, its slow-lane slot): longer than any
 * attempt can run, the POST's own timeout plus the connection and the writes around it (signing,
 * recording the outcome; in AWS the signer's 30 s function timeout ends an attempt first).
 */
export const attemptLeaseMs = () => config().webhookResponseTimeoutMs + 20_000;

/**
 * A slow-lane attempt slot of the endpoint (at most `webhookSlowLaneAttemptsPerEndpoint` attempts
 * under way at once), or undefined when all are taken. One conditional UpdateItem; the attempt's
 * outcome write gives it back (afterSuccess, afterFailure). Losing a race for the free slot the read
 * showed counts as full: the message asks again shortly, never more than the cap run.
 */
export async function claimAttemptSlot(ctx: RequestContext, endpoint: Endpoint): Promise<number | undefined> {
  const nowMs = Date.now();
  const slot = freeSlot(endpoint, config().webhookSlowLaneAttemptsPerEndpoint, nowMs);
  if (slot === undefined) return undefined;
  const taken = await takeAttemptSlot(
    ctx,
    endpoint.key_id,
    slot,
    new Date(nowMs).toISOString(),
    new Date(nowMs + attemptLeaseMs()).toISOString(),
  );
  return taken ? slot : undefined;
}

/** A delivery left waiting for its parked endpoint: pending, no next attempt, not queued. */
export async function parkDelivery(ctx: RequestContext, delivery: Delivery, result?: PostResult): Promise<void> {
  const now = new Date().toISOString();
  await updateDelivery(ctx, delivery.key_id, delivery.event_id, delivery.round, {
    state: 'pending',
    attempted: result !== undefined,
    ...(result ? { last_status_code: result.status, last_error: result.error } : {}),
    next_attempt_at: null,
    parked: true,
    now,
  });
  recordDelivery('parked', result?.ms);
}

/**
 * A success after failures ends the streak and closes the circuit (a healthy endpoint's successes
 * write nothing); a slow-lane attempt's slot is given back in the same write.
 */
export async function afterSuccess(ctx: RequestContext, endpoint: Endpoint, slot?: number): Promise<void> {
  if (endpoint.consecutive_failures > 0 || slot !== undefined) await recordEndpointSuccess(ctx, endpoint.key_id, slot);
}

/**
 * Counts a failed attempt (giving back its slow-lane slot in the same write); true when the
 * endpoint is parked now (by this failure or before).
 */
export async function afterFailure(
  ctx: RequestContext,
  key: DeliverableKey,
  result: PostResult,
  announce: SignerPorts['announce'],
  slot?: number,
): Promise<boolean> {
  const cfg = config();
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const streak = await recordEndpointFailure(ctx, key.id, now, result.error, slot);
  if (streak.state === 'parked') return true;
  if (
    !shouldPark(streak, nowMs, {
      afterFailures: cfg.webhookParkAfterFailures,
      afterSeconds: cfg.webhookParkAfterSeconds,
    })
  )
    return false;
  const reason = parkReason(streak, cfg.webhookParkAfterSeconds);
  const nextProbe = probeDueAt(nowMs);
  const parked = await parkEndpoint(ctx, key.id, now, reason, nextProbe);
  // Parked by another attempt at the same moment: it announces and schedules the probe.
  if (!parked) return true;
  await sendProbe(key.id, nextProbe);
  emitMetrics({ reason: 'sustained_failures' }, [['EndpointsParked', MetricUnit.Count, 1]]);
  await announce('webhook.endpoint_parked', {
    key_id: key.id,
    store_id: key.store_id,
    host: targetName(key.destination),
    destination: key.destination.kind,
    since: now,
    reason,
    next_probe_at: nextProbe,
  });
  return true;
}

/**
 * A message of a parked endpoint whose probe is long overdue (its message was lost: a local
 * restart, a dead-lettered probe): schedule a new one. The guard on the old due time lets one
 * of many such messages win.
 */
export async function healLostProbe(ctx: RequestContext, endpoint: Endpoint): Promise<void> {
  const slackMs = (config().webhookProbeIntervalSeconds + 60) * 1000;
  if (endpoint.next_probe_at !== null && Date.parse(endpoint.next_probe_at) + slackMs > Date.now()) return;
  const at = new Date().toISOString();
  if (await scheduleProbe(ctx, endpoint.key_id, at, undefined, endpoint.next_probe_at)) {
    log('warn', 'webhook probe was overdue; scheduled again', { key_id: endpoint.key_id });
    await sendProbe(endpoint.key_id, at);
  }
}

/** The probe failed: parked on, the next probe one interval later. */
export async function probeFailed(ctx: RequestContext, keyId: number, result: PostResult): Promise<void> {
  const at = probeDueAt(Date.now());
  if (await scheduleProbe(ctx, keyId, at, result.error ?? 'unknown')) await sendProbe(keyId, at);
}
