import type { RequestContext } from '#shared/context.ts';
import { config } from '#shared/config.ts';
import { readLogPage, type LoggedEvent } from '#db/event/log.repo.ts';
import { claimAttempt, createDelivery, getDeliveries, releaseAttempt } from '#db/webhook/delivery.repo.ts';
import { giveBackAttemptSlot } from '#db/webhook/endpoint.repo.ts';
import { advanceOrderedCursor, getOrderedCursor } from '#db/webhook/ordered.repo.ts';
import { eventView } from '#domain/event/event.ts';
import type { Destination } from '#domain/key/destination.ts';
import type { DeliverableKey, PostResult } from '#domain/webhook/deliverable.ts';
import { eventBody, messageOf, newDelivery, type Delivery, type DeliveryMessage } from '#domain/webhook/delivery.ts';
import { familyOf, type Family } from '#domain/webhook/destination.ts';
import type { Endpoint, Lane } from '#domain/webhook/endpoint.ts';
import { receives } from '#domain/webhook/event-subscription.ts';
import { DUE_TOLERANCE_MS, hopDelaySeconds } from '#domain/webhook/retry.ts';
import { sendDeliveryMessage } from '#queue/sqs.ts';
import { log } from '#shared/log.ts';
import { attemptOnce } from './delivery-attempt.ts';
import * as endpointHealth from './endpoint-health.ts';
import type { MessageOutcome, ReceivedMessage, SignerPorts } from './webhook-delivery.ts';
import { deferOverCap, waitOnQueue } from './webhook-queue-wait.ts';

/**
 * Ordered delivery to an SQS FIFO queue (docs/destinations.md, "Order"): per key and family (the
 * queue's message group, `acme:orders`), an event is sent only once every earlier event of its group
 * that the key receives is delivered or failed for good, so a retry never overtakes a later event.
 *
 * The store's event log is the authority: it is numbered without holes, and an event has its number
 * before any delivery of it exists. A **run** walks the log from the group's cursor in sequence order
 * and attempts the first unfinished event it meets (the group's *head*), then the next, and so on;
 * an event no delivery exists for yet (the fan-out has not reached it: it works 16 events at once,
 * and the express lane numbers order events apart) is made here from the log entry, byte for byte
 * what the fan-out makes, if the key receives it. Every queue message of an ordered key only wakes
 * its group's run, whichever event it names; the head keeps the usual retry schedule, circuit,
 * lanes and parking, and the events behind it wait as `pending` in the delivery log, unattempted.
 *
 * Two runs of a group at once are safe: each attempt is claimed on its delivery first
 * (`claimAttempt`), a run that finds the head claimed leaves it to the holder, who goes on after it.
 */

export type OrderedKey = DeliverableKey & { destination: Extract<Destination, { kind: 'sqs' }> };

/**
 * How a run ended: at the log's end; at a head that waits for its retry (its wake-up is queued);
 * at a head another run is attempting until `until`; parked; out of time (handed over).
 */
export interface OrderedRun {
  state: 'idle' | 'waiting' | 'held' | 'parked' | 'over_budget';
  attempted: boolean;
  until?: string;
  /** The failed attempt that found (or left) the endpoint parked: a probe's outcome. */
  lastFailure?: PostResult;
}

/**
 * Log entries a run reads per Query: few first (the head is usually next to the cursor, and every
 * message of a busy group starts a run that only finds it claimed), then more while it passes
 * other families' events or delivers a backlog, up to 100 (~70 KB: 18 read units, strongly consistent).
 */
const FIRST_PAGE = 10;
const LOG_PAGE = 100;
/** How long one message's run goes on before it hands over to a new message (the signer runs ≤ 30 s, a send ≤ 10 s). */
const RUN_BUDGET_MS = 15_000;

/** Where a group's run starts: past its cursor, and past the events numbered before the queue was set. */
const startOf = async (ctx: RequestContext, key: OrderedKey, family: Family) =>
  Math.max(await getOrderedCursor(ctx, key.id, family), key.ordered_from ?? 0);

/**
 * A queue message of an ordered key's delivery (processMessage has checked the key, the endpoint
 * and the lane): runs the delivery's group. In the slow lane the run takes the endpoint's attempt
 * slot for its one attempt (see runOrderedGroup), and gives it back unused. `passed`: the group is
 * past this event already (a redelivery of one delivered or failed): it goes on its own, as an
 * explicit request, out of order by nature.
 */
export async function runOrderedFor(
  ctx: RequestContext,
  m: ReceivedMessage,
  key: OrderedKey,
  message: DeliveryMessage,
  delivery: Delivery,
  sequence: number,
  endpoint: Endpoint,
  ports: SignerPorts,
): Promise<MessageOutcome | 'passed'> {
  const lane = m.lane;
  const family = familyOf(delivery.event_type);
  const from = await startOf(ctx, key, family);
  if (sequence <= from) return 'passed';
  let slot: number | undefined;
  if (lane === 'slow') {
    slot = await endpointHealth.claimAttemptSlot(ctx, endpoint);
    if (slot === undefined) return deferOverCap(message);
  }
  const run = await runOrderedGroup(ctx, {
    key,
    family,
    from,
    endpoint,
    ports,
    lane,
    slot,
    probe: false,
    startedMs: Date.now(),
  });
  if (slot !== undefined && !run.attempted) await giveBackAttemptSlot(ctx, key.id, slot);
  log('debug', 'ordered run', { key_id: key.id, event_id: delivery.event_id, state: run.state });
  // Another run is attempting the head: this message looks again when its claim ends, so that a
  // run that dies holding it (its own message back before the claim ends) leaves no group unwoken.
  if (run.state === 'held' && run.until !== undefined)
    return waitOnQueue(m, message, Math.max(1, (Date.parse(run.until) - Date.now()) / 1000), run.until);
  return 'done';
}

/**
 * One run of a group, from its cursor to the log's end or to a head that must wait. `probe`: the
 * parked endpoint's probe (webhook-probe.ts) runs it, attempting parked heads (and due or not), and
 * hands over by scheduling the next probe itself. In the slow lane (the endpoint's circuit is open)
 * a run makes one attempt and hands the rest to the fast lane, where a closed circuit belongs.
 */
export async function runOrderedGroup(
  ctx: RequestContext,
  input: {
    key: OrderedKey;
    family: Family;
    /** Its start, when the caller read it already. */
    from?: number;
    endpoint: Endpoint;
    ports: SignerPorts;
    lane: Lane;
    slot?: number | undefined;
    probe: boolean;
    startedMs: number;
  },
): Promise<OrderedRun> {
  const { key, family, ports, lane, probe } = input;
  let { endpoint, slot } = input;
  let attempted = false;
  let handOver = false;
  const start = input.from ?? (await startOf(ctx, key, family));
  let passed = start;
  let saved = start;
  const save = async () => {
    if (passed <= saved) return;
    await advanceOrderedCursor(ctx, key.id, family, passed);
    saved = passed;
  };
  const nowSeconds = () => Math.floor(Date.now() / 1000);

  for (let limit = FIRST_PAGE; ; limit = Math.min(LOG_PAGE, limit * 4)) {
    const page = await readLogPage(ctx, key.store_id, passed, limit);
    const mine = page.events.filter((e) => familyOf(e.event_type) === family && e.ttl >= nowSeconds());
    const known = mine.length
      ? await getDeliveries(
          ctx,
          key.id,
          mine.map((e) => e.event_id),
        )
      : new Map<string, Delivery>();
    let reread = false;
    for (const e of page.events) {
      const delivery =
        familyOf(e.event_type) === family && e.ttl >= nowSeconds()
          ? (known.get(e.event_id) ?? (wanted(key, e) ? await deliveryFromLog(ctx, key, e) : undefined))
          : undefined;
      if (delivery?.state !== 'pending') {
        passed = e.sequence;
        continue;
      }
      // The group's head.
      await save();
      if (handOver || Date.now() - input.startedMs > RUN_BUDGET_MS) {
        if (!probe) await sendDeliveryMessage(messageOf(delivery), 0, 'fast');
        return { state: 'over_budget', attempted };
      }
      if (!probe && delivery.parked_at !== null) return { state: 'parked', attempted };
      const dueInMs = delivery.next_attempt_at === null ? 0 : Date.parse(delivery.next_attempt_at) - Date.now();
      if (!probe && dueInMs > DUE_TOLERANCE_MS) return { state: 'waiting', attempted };
      const nowMs = Date.now();
      const lease = new Date(nowMs + endpointHealth.attemptLeaseMs()).toISOString();
      const claim = await claimAttempt(
        ctx,
        key.id,
        delivery.event_id,
        delivery.round,
        new Date(nowMs).toISOString(),
        lease,
      );
      if (claim.kind === 'held') return { state: 'held', attempted, until: claim.until };
      if (claim.kind === 'gone') {
        // Finished or redelivered by someone else since the read: read again from here.
        reread = true;
        break;
      }
      let outcome: Awaited<ReturnType<typeof attemptOnce>>;
      try {
        outcome = await attemptOnce(ctx, key, delivery, endpoint, ports, {
          lane,
          receiveCount: 1,
          nowMs,
          slot,
          // The head's wake-up travels as a delayed message of its own (any message wakes the run).
          beforeRetry: (nextAt, delaySeconds) =>
            sendDeliveryMessage(
              { ...messageOf(delivery), due_at: nextAt },
              hopDelaySeconds(delaySeconds, config().webhookQueueWaitLimitSeconds),
              lane,
            ),
        });
      } catch (err) {
        // A platform error: the message that woke this run comes back after a back-off and finds the head free.
        await releaseAttempt(ctx, key.id, delivery.event_id, delivery.round).catch(() => undefined);
        throw err;
      }
      attempted = true;
      slot = undefined;
      handOver = lane === 'slow' && !probe;
      switch (outcome.kind) {
        case 'delivered':
          endpoint = { ...endpoint, consecutive_failures: 0 };
          passed = e.sequence;
          continue;
        case 'failed':
          passed = e.sequence;
          continue;
        case 'stale':
          reread = true;
          break;
        case 'parked':
          return { state: 'parked', attempted, lastFailure: outcome.result };
        case 'retry':
          return { state: 'waiting', attempted };
      }
      if (reread) break;
    }
    await save();
    if (!reread && !page.more) return { state: 'idle', attempted };
  }
}

/** Whether the key receives this logged event (the fan-out's choice, shared/domain/webhook/event-subscription.ts). */
const wanted = (key: OrderedKey, e: LoggedEvent) =>
  receives(key, { event_type: e.event_type, changed_fields: e.payload.changed_fields, origin: e.origin });

/**
 * The delivery the fan-out would make of a logged event (the same body: the event's view for this
 * key), made first by the run. Marked queued: the run attempts it now, so the fan-out, finding it,
 * queues nothing more.
 */
async function deliveryFromLog(ctx: RequestContext, key: OrderedKey, e: LoggedEvent): Promise<Delivery> {
  const now = new Date().toISOString();
  const fresh = newDelivery(
    {
      key_id: key.id,
      event_id: e.event_id,
      event_type: e.event_type,
      store_id: key.store_id,
      queued_round: 0,
      body: eventBody({ ...eventView(e, key.id) }),
    },
    now,
  );
  const created = await createDelivery(ctx, fresh);
  return created.created ? fresh : created.existing;
}
