import type { RequestContext } from '#shared/context.ts';
import { config } from '#shared/config.ts';
import { updateDelivery } from '#db/webhook/delivery.repo.ts';
import type { Delivery } from '#domain/webhook/delivery.ts';
import type { Endpoint, Lane } from '#domain/webhook/endpoint.ts';
import { afterFailure, maxReceiveCount } from '#domain/webhook/retry.ts';
import { targetName } from '#domain/key/destination.ts';
import { isSuccess, type DeliverableKey, type PostResult } from '#domain/webhook/deliverable.ts';
import { log } from '#shared/log.ts';
import { recordDelivery } from './delivery-metrics.ts';
import * as endpointHealth from './endpoint-health.ts';
import type { SignerPorts } from './webhook-delivery.ts';

/**
 * What one attempt came to, recorded: `delivered`; `parked` (its endpoint is parked now, the
 * delivery waits for the probe); `failed` for good; `retry` in `delaySeconds` (the caller puts the
 * message to sleep until `nextAt`); `stale` (a redelivery started a new round meanwhile).
 */
export type AttemptOutcome =
  | { kind: 'delivered' | 'parked' | 'failed' | 'stale'; result: PostResult }
  | { kind: 'retry'; result: PostResult; delaySeconds: number; nextAt: string };

/**
 * Sends one claimed delivery and records its outcome: the delivery log, the endpoint's streak
 * (circuit and parking, endpoint-health.ts; `slot` is the slow lane's, given back in that write),
 * the metrics and the log line. The wait before a retry is the caller's: a received message sleeps
 * on the queue after this returns; an ordered run (ordered-delivery.ts) queues the head's wake-up in
 * `beforeRetry`, before the retry is recorded, so that a failure between the two leaves a due
 * delivery (attempted again at once) rather than a waiting one that nothing wakes.
 */
export async function attemptOnce(
  ctx: RequestContext,
  key: DeliverableKey,
  delivery: Delivery,
  endpoint: Endpoint,
  ports: SignerPorts,
  at: {
    lane: Lane;
    receiveCount: number;
    nowMs: number;
    slot: number | undefined;
    beforeRetry?: (nextAt: string, delaySeconds: number) => Promise<void>;
  },
): Promise<AttemptOutcome> {
  const cfg = config();
  const { event_id: eventId, key_id: keyId, round } = delivery;
  const result = await ports.send(key, delivery, at.nowMs);
  const now = new Date().toISOString();
  const attemptNo = delivery.round_attempts + 1;
  const logFields = {
    event_id: eventId,
    key_id: keyId,
    destination: key.destination.kind,
    host: targetName(key.destination),
    attempt: attemptNo,
    status: result.status,
    ms: result.ms,
    lane: at.lane,
  };

  if (isSuccess(result)) {
    const updated = await updateDelivery(ctx, keyId, eventId, round, {
      state: 'delivered',
      attempted: true,
      last_status_code: result.status,
      last_error: null,
      next_attempt_at: null,
      now,
    });
    await endpointHealth.afterSuccess(ctx, endpoint, at.slot);
    log('info', 'webhook delivered', logFields);
    recordDelivery('delivered', result.ms);
    return { kind: updated ? 'delivered' : 'stale', result };
  }
  if (await endpointHealth.afterFailure(ctx, key, result, ports.announce, at.slot)) {
    await endpointHealth.parkDelivery(ctx, delivery, result);
    log('info', 'webhook attempt failed; endpoint parked', { ...logFields, error: result.error });
    return { kind: 'parked', result };
  }

  const decision = afterFailure({
    schedule: cfg.webhookRetrySchedule,
    attemptsInRound: attemptNo,
    receiveCount: at.receiveCount,
    maxReceiveCount: maxReceiveCount(cfg.webhookRetrySchedule, cfg.webhookQueueWaitLimitSeconds),
    retryAfterSeconds: result.retryAfterSeconds,
  });
  if (!decision.retry) {
    const updated = await updateDelivery(ctx, keyId, eventId, round, {
      state: 'failed',
      attempted: true,
      last_status_code: result.status,
      last_error: `${result.error}; ${decision.reason}`,
      next_attempt_at: null,
      now,
    });
    log('warn', 'webhook failed for good', { ...logFields, error: result.error, recorded: updated !== undefined });
    recordDelivery('failed', result.ms);
    return { kind: updated ? 'failed' : 'stale', result };
  }
  const nextAt = new Date(Date.now() + decision.delaySeconds * 1000).toISOString();
  await at.beforeRetry?.(nextAt, decision.delaySeconds);
  const updated = await updateDelivery(ctx, keyId, eventId, round, {
    state: 'pending',
    attempted: true,
    last_status_code: result.status,
    last_error: result.error,
    next_attempt_at: nextAt,
    now,
  });
  log('info', 'webhook attempt failed; retrying', {
    ...logFields,
    error: result.error,
    retry_in_s: decision.delaySeconds,
  });
  recordDelivery('retrying', result.ms);
  if (!updated) return { kind: 'stale', result };
  return { kind: 'retry', result, delaySeconds: decision.delaySeconds, nextAt };
}
