import type { RequestContext } from '#shared/context.ts';
import { getKey } from '#db/key/repo.ts';
import { claimAttempt, getDelivery, releaseAttempt, updateDelivery } from '#db/webhook/delivery.repo.ts';
import { getEndpoint } from '#db/webhook/endpoint.repo.ts';
import { config } from '#shared/config.ts';
import { parseDeliveryMessage, type Delivery } from '#domain/webhook/delivery.ts';
import { laneFor, parseProbeMessage, type Endpoint, type Lane } from '#domain/webhook/endpoint.ts';
import { DUE_TOLERANCE_MS } from '#domain/webhook/retry.ts';
import { log } from '#shared/log.ts';
import { isOrdered } from '#domain/key/destination.ts';
import { sequenceInBody } from '#domain/webhook/destination.ts';
import { whyNotDeliverable, type DeliverableKey, type PostResult } from '#domain/webhook/deliverable.ts';
import { recordDelivery } from './delivery-metrics.ts';
import * as endpointHealth from './endpoint-health.ts';
import { handleProbe } from './webhook-probe.ts';
import { deferOverCap, moveToLane, nextHop, waitOnQueue } from './webhook-queue-wait.ts';
import { runOrderedFor, type OrderedKey } from './ordered-delivery.ts';
import { attemptOnce } from './delivery-attempt.ts';

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  /** ApproximateReceiveCount: this receive included. */
  receiveCount: number;
  /** The queue it came from (docs/webhooks.md, "Lanes"). */
  lane: Lane;
}

/** `done`: delete the message. `keep`: leave it (a batch item failure); its visibility is set. */
export type MessageOutcome = 'done' | 'keep';

/**
 * What the signer's handler lends its use cases: the send to the key's destination (functions/
 * webhooks/send.ts: the signed POST, opening the secret with KMS, or the SQS or EventBridge send under
 * the integrator's role) and the operational event (SNS), none of which a use case imports.
 */
export interface SignerPorts {
  send: (key: DeliverableKey, delivery: Delivery, nowMs?: number) => Promise<PostResult>;
  announce: (type: string, data: Record<string, unknown>) => Promise<void>;
}

/** The key the admin asks the signer to ping (functions/webhooks/ping.ts), as the signer reads it. */
export const keyToPing = (ctx: RequestContext, keyId: number) => getKey(ctx, keyId);

/**
 * One queue message: attempt its delivery if due, then record the outcome and schedule the next
 * attempt (webhook-queue-wait.ts) or give up. The delivery log, not the message, holds the state, so any
 * copy of a message (SQS delivers at least once) finds the truth there: delivered, failed and
 * superseded rounds are dropped. What cannot be handled (an unreadable message, a throttled
 * table) throws: the handler backs off, and the queue dead-letters it after maxReceiveCount.
 */
export async function processMessage(
  ctx: RequestContext,
  m: ReceivedMessage,
  ports: SignerPorts,
): Promise<MessageOutcome> {
  const probe = parseProbeMessage(m.body);
  if (probe) return handleProbe(ctx, probe, ports);
  const message = parseDeliveryMessage(m.body);
  if (message.due_at !== undefined) {
    const remainingMs = Date.parse(message.due_at) - Date.now();
    if (remainingMs > DUE_TOLERANCE_MS) return nextHop(m, message, remainingMs);
  }
  const { event_id: eventId, key_id: keyId, round } = message;
  const [key, delivery, endpoint] = await Promise.all([
    getKey(ctx, keyId),
    getDelivery(ctx, keyId, eventId),
    getEndpoint(ctx, keyId),
  ]);
  Object.assign(ctx.log, { key_id: keyId, store_id: delivery?.store_id ?? key?.store_id ?? null });
  if (!delivery || delivery.round !== round || delivery.state !== 'pending') return 'done';

  const nowMs = Date.now();
  const dueInMs = delivery.next_attempt_at === null ? 0 : Date.parse(delivery.next_attempt_at) - nowMs;
  if (dueInMs > DUE_TOLERANCE_MS && delivery.next_attempt_at !== null) {
    // Back early (a duplicate copy): sleep again, no attempt.
    return waitOnQueue(m, message, dueInMs / 1000, delivery.next_attempt_at);
  }

  const refusal = whyNotDeliverable(key, delivery.event_type);
  if (refusal !== null || !key?.destination) {
    await updateDelivery(ctx, keyId, eventId, round, {
      state: 'failed',
      attempted: false,
      last_error: refusal,
      next_attempt_at: null,
      now: new Date().toISOString(),
    });
    log('warn', 'webhook not deliverable', { event_id: eventId, reason: refusal });
    recordDelivery('not_deliverable');
    return 'done';
  }
  if (endpoint.state === 'parked') {
    // Not attempted, not hopping through the schedule: it waits in the log for the probe's drain.
    await endpointHealth.parkDelivery(ctx, delivery);
    await endpointHealth.healLostProbe(ctx, endpoint);
    return 'done';
  }
  // Each lane attempts only its own endpoints: a circuit that opened or closed since the message
  // was queued moves it, unattempted (the fan-out queues every delivery in the fast lane).
  const lane = laneFor(endpoint, config().webhookCircuitAfterFailures);
  if (lane !== m.lane) {
    log('info', 'webhook delivery moved to its endpoint’s lane', { event_id: eventId, key_id: keyId, lane });
    return moveToLane(message, lane);
  }
  // A FIFO queue's deliveries go out in sequence order, one group at a time: this message only
  // wakes its group's run, which attempts the oldest unfinished event of the group first.
  const sequence = isOrdered(key.destination) ? sequenceInBody(delivery.body) : undefined;
  if (sequence !== undefined && sequence > (key.ordered_from ?? 0)) {
    const ordered = await runOrderedFor(ctx, m, key as OrderedKey, message, delivery, sequence, endpoint, ports);
    if (ordered !== 'passed') return ordered;
  }
  // One attempt at a time: while another copy of this message holds the attempt (SQS delivers at
  // least once; the stream and the express lane may both queue a delivery), this copy waits out
  // its lease and then finds the outcome: delivered (dropped then), or still pending (attempted).
  const lease = new Date(Date.now() + endpointHealth.attemptLeaseMs()).toISOString();
  const claim = await claimAttempt(ctx, keyId, eventId, round, new Date().toISOString(), lease);
  if (claim.kind === 'gone') return 'done';
  if (claim.kind === 'held') {
    log('debug', 'webhook attempt under way in another copy; this one waits', { event_id: eventId, key_id: keyId });
    return waitOnQueue(m, message, Math.max(1, (Date.parse(claim.until) - Date.now()) / 1000), claim.until);
  }
  let slot: number | undefined;
  if (lane === 'slow') {
    slot = await endpointHealth.claimAttemptSlot(ctx, endpoint);
    if (slot === undefined) {
      await releaseAttempt(ctx, keyId, eventId, round);
      return deferOverCap(message);
    }
  }
  try {
    return await attempt(ctx, m, key as DeliverableKey, delivery, endpoint, nowMs, ports, slot);
  } catch (err) {
    // A platform error (the message is received again after a back-off): give the attempt back,
    // or the next receive would wait out the lease before trying again.
    await releaseAttempt(ctx, keyId, eventId, round).catch(() => undefined);
    throw err;
  }
}

async function attempt(
  ctx: RequestContext,
  m: ReceivedMessage,
  key: DeliverableKey,
  delivery: Delivery,
  endpoint: Endpoint,
  nowMs: number,
  ports: SignerPorts,
  slot: number | undefined,
): Promise<MessageOutcome> {
  const outcome = await attemptOnce(ctx, key, delivery, endpoint, ports, {
    lane: m.lane,
    receiveCount: m.receiveCount,
    nowMs,
    slot,
  });
  if (outcome.kind !== 'retry') return 'done';
  return waitOnQueue(m, delivery, outcome.delaySeconds, outcome.nextAt);
}
