import type { RequestContext } from '#shared/context.ts';
import { config } from '#shared/config.ts';
import { getKey } from '#db/key/repo.ts';
import { getDelivery, listParkedDeliveries, updateDelivery } from '#db/webhook/delivery.repo.ts';
import { claimProbe, getEndpoint, resumeEndpoint, scheduleProbe } from '#db/webhook/endpoint.repo.ts';
import type { ProbeMessage } from '#domain/webhook/endpoint.ts';
import { DUE_TOLERANCE_MS, hopDelaySeconds } from '#domain/webhook/retry.ts';
import { sendDeliveryMessage } from '#queue/sqs.ts';
import { log } from '#shared/log.ts';
import { isSuccess, whyNotDeliverable, type DeliverableKey } from '#domain/webhook/deliverable.ts';
import { isOrdered } from '#domain/key/destination.ts';
import { ORDERED_FAMILIES } from '#domain/webhook/destination.ts';
import { runOrderedGroup, type OrderedKey } from './ordered-delivery.ts';
import { recordDelivery } from './delivery-metrics.ts';
import { parkDelivery, probeFailed, sendProbe } from './endpoint-health.ts';
import type { MessageOutcome, SignerPorts } from './webhook-delivery.ts';

/** How long one probe message drains before it hands over to a fresh one (the signer runs ≤ 30 s, a POST ≤ 10 s). */
const DRAIN_BUDGET_MS = 15_000;
/** The probe lease: longer than a drain plus its last POST, so two drains never overlap. */
const LEASE_MS = 60_000;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A probe message of a parked endpoint. When due (earlier copies only hop on, like a long
 * retry), the one that holds the lease tries the oldest parked delivery: a failure keeps the
 * endpoint parked until the next probe; a success drains the rest, oldest first, one at a time
 * (a receiver just back is not flooded), then resumes the endpoint. A probe whose due time is no
 * longer the endpoint's (a duplicate, or one superseded by a resume) is dropped.
 */
export async function handleProbe(
  ctx: RequestContext,
  message: ProbeMessage,
  ports: SignerPorts,
): Promise<MessageOutcome> {
  const remainingMs = Date.parse(message.due_at) - Date.now();
  if (remainingMs > DUE_TOLERANCE_MS) {
    await sendDeliveryMessage(
      message,
      hopDelaySeconds(remainingMs / 1000, config().webhookQueueWaitLimitSeconds),
      'slow',
    );
    return 'done';
  }
  const keyId = message.key_id;
  Object.assign(ctx.log, { key_id: keyId });
  const endpoint = await getEndpoint(ctx, keyId);
  if (endpoint.state !== 'parked' || endpoint.next_probe_at !== message.due_at) return 'done';
  const startedMs = Date.now();
  if (!(await claimProbe(ctx, keyId, iso(startedMs), iso(startedMs + LEASE_MS)))) return 'done';
  await drain(ctx, keyId, startedMs, ports);
  return 'done';
}

async function drain(ctx: RequestContext, keyId: number, startedMs: number, ports: SignerPorts): Promise<void> {
  const key = await getKey(ctx, keyId);
  const refusal = whyNotDeliverable(key);
  if (refusal !== null || !key?.destination) {
    // Nothing can be delivered any more (revoked, no URL): the backlog fails with the reason, as
    // its messages would have, and the endpoint is active again for whatever URL comes next.
    for (const d of await listParkedDeliveries(ctx, keyId)) {
      await updateDelivery(ctx, keyId, d.event_id, d.round, {
        state: 'failed',
        attempted: false,
        last_error: refusal,
        next_attempt_at: null,
        now: iso(Date.now()),
      });
    }
    await resumeEndpoint(ctx, keyId, iso(Date.now()));
    return;
  }
  const target = key as DeliverableKey;
  if (isOrdered(target.destination)) {
    if (!(await drainOrdered(ctx, target as OrderedKey, startedMs, ports))) return;
    return resume(ctx, keyId, 0);
  }
  let delivered = 0;
  for (;;) {
    const backlog = await listParkedDeliveries(ctx, keyId);
    if (backlog.length === 0) break;
    for (const entry of backlog) {
      if (Date.now() - startedMs > DRAIN_BUDGET_MS) {
        // Handed over to a fresh probe message due now: the order holds, one drain at a time.
        const at = iso(Date.now());
        if (await scheduleProbe(ctx, keyId, at)) await sendProbe(keyId, at);
        log('info', 'webhook drain continues in a new message', { key_id: keyId, delivered });
        return;
      }
      const d = await getDelivery(ctx, keyId, entry.event_id);
      if (d?.state !== 'pending' || d.round !== entry.round || d.parked_at === null) continue;
      const result = await ports.send(target, d);
      if (!isSuccess(result)) {
        await parkDelivery(ctx, d, result);
        await probeFailed(ctx, keyId, result);
        log(
          'info',
          delivered ? 'webhook endpoint failed again while draining; parked on' : 'webhook probe failed; parked on',
          { key_id: keyId, event_id: d.event_id, error: result.error, delivered },
        );
        return;
      }
      await updateDelivery(ctx, keyId, d.event_id, d.round, {
        state: 'delivered',
        attempted: true,
        last_status_code: result.status,
        last_error: null,
        next_attempt_at: null,
        now: iso(Date.now()),
      });
      recordDelivery('delivered', result.ms);
      delivered += 1;
    }
  }
  await resume(ctx, keyId, delivered);
}

/** The backlog is drained: the endpoint is active again, and what was parked meanwhile is queued. */
async function resume(ctx: RequestContext, keyId: number, delivered: number): Promise<void> {
  await resumeEndpoint(ctx, keyId, iso(Date.now()));
  // Parked between the last look and the resume: queued like any new delivery, none is left behind.
  for (const d of await listParkedDeliveries(ctx, keyId)) {
    const requeued = await updateDelivery(ctx, keyId, d.event_id, d.round, {
      state: 'pending',
      attempted: false,
      next_attempt_at: iso(Date.now()),
      now: iso(Date.now()),
    });
    if (requeued) await sendDeliveryMessage({ event_id: d.event_id, key_id: keyId, round: d.round });
  }
  log('info', 'webhook endpoint resumed', { key_id: keyId, delivered });
}

/**
 * The probe of an ordered (FIFO) destination: each family's run attempts its group's head, parked
 * or not, then the events behind it in sequence order (shared/app/ordered-delivery.ts), never the
 * parked deliveries oldest first. True when every group is through, so the endpoint resumes; a
 * failure parks it on (the next probe one interval later), running out of time hands over to a
 * fresh probe due now.
 */
async function drainOrdered(
  ctx: RequestContext,
  key: OrderedKey,
  startedMs: number,
  ports: SignerPorts,
): Promise<boolean> {
  for (const family of ORDERED_FAMILIES) {
    const run = await runOrderedGroup(ctx, {
      key,
      family,
      endpoint: await getEndpoint(ctx, key.id),
      ports,
      lane: 'slow',
      probe: true,
      startedMs,
    });
    if (run.state === 'parked') {
      if (run.lastFailure) await probeFailed(ctx, key.id, run.lastFailure);
      log('info', 'webhook probe failed; parked on', { key_id: key.id, family, error: run.lastFailure?.error });
      return false;
    }
    if (run.state === 'over_budget') {
      const at = iso(Date.now());
      if (await scheduleProbe(ctx, key.id, at)) await sendProbe(key.id, at);
      log('info', 'webhook drain continues in a new message', { key_id: key.id, family });
      return false;
    }
  }
  return true;
}
