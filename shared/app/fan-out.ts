import type { RequestContext } from '#shared/context.ts';
import type { DynamoDBRecord } from 'aws-lambda';
import { getKey, listKeysOfStore } from '#db/key/repo.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';
import { createDelivery, getDelivery, markQueued } from '#db/webhook/delivery.repo.ts';
import { outboxRecordFromImage, type OutboxRecord } from '#db/event/outbox-stream.ts';
import { isOutboxInsert } from '#db/event/outbox-stream-filter.ts';
import { eventBody, messageOf, newDelivery, type Delivery } from '#domain/webhook/delivery.ts';
import { sendDeliveryMessage } from '#queue/sqs.ts';
import { errorFields, log } from '#shared/log.ts';
import { NUMBERED_AT_ONCE, numberEvents } from '#db/event/log.repo.ts';
import { canSee, causedBy, eventView, type EventPayload } from '#domain/event/event.ts';
import { subscribes } from '#domain/webhook/event-subscription.ts';
import { retryLost } from './contention.ts';

/** Keys that receive events (docs/webhooks.md, docs/destinations.md): active, with a URL, a queue or a bus. */
const receivesWebhooks = (k: KeyRecord) => k.status === 'active' && k.destination !== null;

/**
 * ...and of those, the ones that may read this event's family (`orders:read`, `catalog:read`,
 * `content:read`) and chose its type (`--events`, default the order events), and when they named
 * fields with it (`product.updated:price`), changed one of them.
 */
const wants = (event: Extract<OutboxRecord, { kind: 'event' }>) => (k: KeyRecord) =>
  canSee(k.abilities, event.event_type) &&
  subscribes(k.events, event.event_type, (event.payload as unknown as EventPayload).changed_fields);

/**
 * Drops the key that caused the event when it chose `--exclude-own`. The store's keys come from
 * gsi1, which does not project `exclude_own` (shared/db/core/table.ts; a projection change
 * rebuilds the index), so the flag is read from the key item itself. Only the causing key can be
 * excluded, so this is one GetItem, and only for an event a key's write caused that this key would
 * receive.
 */
async function withoutOwnEcho(
  ctx: RequestContext,
  event: Extract<OutboxRecord, { kind: 'event' }>,
  targets: KeyRecord[],
) {
  const own = targets.find((k) => causedBy(event.origin, k.id));
  if (!own || !(await getKey(ctx, own.id))?.exclude_own) return targets;
  return targets.filter((k) => k !== own);
}

/**
 * Queue the message of `delivery`'s current round unless a replay already did. SQS standard
 * queues have no deduplication, so the delivery log is the idempotency record: it is created
 * (conditionally) before the send and marked after it. A crash between the two sends the message
 * again on the replay; the signer drops what is already delivered.
 */
async function queueOnce(ctx: RequestContext, delivery: Delivery): Promise<boolean> {
  if (delivery.queued_round !== null && delivery.queued_round >= delivery.round) return false;
  await sendDeliveryMessage(messageOf(delivery));
  await markQueued(ctx, delivery.key_id, delivery.event_id, delivery.round);
  return true;
}

/**
 * The sequences of `eventIds` (one store's, in stream order): the ones they have, the next ones
 * for the rest, taken in that order (docs/webhooks.md, "How to never miss an event"). A stream
 * batch's events of one store are numbered together, up to NUMBERED_AT_ONCE per transaction, so a
 * bulk load costs a few round trips per batch rather than two per event; a transaction that lost to
 * another consumer reads its events and the counter again and numbers what is left.
 */
export async function assignSequences(
  ctx: RequestContext,
  storeId: string,
  eventIds: readonly string[],
): Promise<Map<string, number>> {
  const numbered = new Map<string, number>();
  for (let start = 0; start < eventIds.length; start += NUMBERED_AT_ONCE) {
    const chunk = eventIds.slice(start, start + NUMBERED_AT_ONCE);
    const outcome = await retryLost(ctx, `the event log of store ${storeId}`, 50, () =>
      numberEvents(ctx, storeId, chunk),
    );
    // No caller to answer: a log still busy after every attempt fails the stream batch, which
    // the stream retries (nothing was numbered that this batch does not number again).
    if (outcome.kind === 'refused') throw new Error(outcome.message);
    for (const [id, sequence] of outcome.sequences) numbered.set(id, sequence);
  }
  return numbered;
}

/** What the records of one store in one stream batch share: their numbers and the store's keys, each read once. */
export interface StoreBatch {
  sequences: Map<string, number>;
  keys: () => Promise<KeyRecord[]>;
}

/**
 * Numbers one store's events of a stream batch together (in stream order) and reads its keys once,
 * side by side with the numbering (one round trip less before the first delivery is queued).
 */
export async function prepareStoreBatch(
  ctx: RequestContext,
  storeId: string,
  records: readonly OutboxRecord[],
): Promise<StoreBatch> {
  const events = records.filter((r) => r.kind === 'event').map((r) => r.event_id);
  const keys = listKeysOfStore(ctx, storeId, false);
  // Awaited by the first event that needs them; a failed numbering must not leave it unhandled.
  keys.catch(() => undefined);
  const sequences = await assignSequences(ctx, storeId, events);
  return { sequences, keys: () => keys };
}

/**
 * The event is numbered first (idempotent, so a replayed stream record keeps its number), then
 * fanned out with that number in every body: a receiver that sees 41 then 43 knows 42 is missing
 * and can fetch it from `GET /events`.
 */
async function fanOutEvent(
  ctx: RequestContext,
  event: Extract<OutboxRecord, { kind: 'event' }>,
  now: string,
  batch?: StoreBatch,
): Promise<number> {
  const sequence =
    batch?.sequences.get(event.event_id) ??
    (await assignSequences(ctx, event.store_id, [event.event_id])).get(event.event_id)!;
  const keys = batch ? await batch.keys() : await listKeysOfStore(ctx, event.store_id, false);
  const targets = await withoutOwnEcho(ctx, event, keys.filter(receivesWebhooks).filter(wants(event)));
  const queued = await Promise.all(
    targets.map(async (key) => {
      // Laid out once per key (only the owner of a product sees its external id): every retry sends the same bytes.
      const body = eventBody({
        ...eventView({ ...event, sequence, payload: event.payload as unknown as EventPayload }, key.id),
      });
      const fresh = newDelivery(
        {
          key_id: key.id,
          event_id: event.event_id,
          event_type: event.event_type,
          store_id: event.store_id,
          queued_round: null,
          body,
        },
        now,
      );
      const created = await createDelivery(ctx, fresh);
      return queueOnce(ctx, created.created ? fresh : created.existing);
    }),
  );
  return queued.filter(Boolean).length;
}

async function fanOutRedelivery(
  ctx: RequestContext,
  request: Extract<OutboxRecord, { kind: 'redelivery' }>,
): Promise<number> {
  const delivery = await getDelivery(ctx, request.key_id, request.event_id);
  // Expired, or a newer redelivery superseded this request: its own request queues it.
  if (!delivery || delivery.round !== request.round) return 0;
  return (await queueOnce(ctx, delivery)) ? 1 : 0;
}

/**
 * One outbox record → one queue message per receiving key (or the one key of a redelivery); answers
 * how many were queued. The per-record line is debug: the handler logs one line per invocation
 * (every product write raises an event, and CloudWatch bills each line), and each queued delivery
 * is in the delivery log anyway.
 */
export async function fanOut(
  ctx: RequestContext,
  record: OutboxRecord,
  now = new Date().toISOString(),
  batch?: StoreBatch,
): Promise<number> {
  const queued =
    record.kind === 'event' ? await fanOutEvent(ctx, record, now, batch) : await fanOutRedelivery(ctx, record);
  log('debug', 'webhook fan-out', { kind: record.kind, event_id: record.event_id, queued });
  return queued;
}

/** Stores fanned out at once: each store's records are numbered in order, stores do not wait on each other. */
const STORES_AT_ONCE = 8;
/**
 * A store's numbered events fanned out at once. Their numbers are given before, in stream order,
 * and one event's deliveries do not depend on another's (delivery is not ordered; receivers order
 * by sequence), so a bulk import's backlog drains at this many events per round trip of the
 * fan-out rather than one (docs/webhooks.md, "Latency during an import").
 */
const EVENTS_AT_ONCE = 16;

/** `run` over `items`, at most `limit` at a time; answers in the items' order. */
async function atMost<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await run(items[i]!);
      }
    }),
  );
  return out;
}

type Indexed = { index: number; record: DynamoDBRecord };

/** What a stream batch came to: stores seen, messages queued, and the index of the first record that failed. */
export interface FanOutBatch {
  stores: number;
  queued: number;
  failedAt: number | null;
}

/**
 * The fan-out's use case (table stream → webhook queue) over one stream batch. The event-source
 * mapping already filters on outbox INSERTs; the same filter runs here too, so a mapping without
 * it (or a test) cannot feed other writes through. A store's records are numbered in stream
 * order, then fanned out side by side; different stores' records are independent, so one store's
 * backlog does not hold every other store's deliveries. The first failure in stream order is the
 * batch's: Lambda resumes the shard from it, and what other stores handled after it is replayed
 * harmlessly (numbering and the delivery log are idempotent).
 */
export async function fanOutStreamBatch(ctx: RequestContext, records: readonly DynamoDBRecord[]): Promise<FanOutBatch> {
  const byStore = new Map<string, Indexed[]>();
  for (const [index, record] of records.entries()) {
    if (!isOutboxInsert(record) || !record.dynamodb?.NewImage) continue;
    const store = String(record.dynamodb.NewImage.pk?.S ?? '');
    byStore.set(store, [...(byStore.get(store) ?? []), { index, record }]);
  }
  const groups = [...byStore.values()];
  const tally = { queued: 0 };
  const failures = await atMost(groups, STORES_AT_ONCE, (group) => fanOutStore(ctx, group, tally));
  const firstFailure = Math.min(Number.POSITIVE_INFINITY, ...failures);
  return {
    stores: groups.length,
    queued: tally.queued,
    failedAt: Number.isFinite(firstFailure) ? firstFailure : null,
  };
}

/**
 * One store's records: numbered together first, in stream order, then fanned out side by side; if
 * the numbering fails (a record that cannot be numbered), one by one in order, so the failure is
 * pinned to its record. Answers the index of the first
 * record that failed, or Infinity.
 */
async function fanOutStore(ctx: RequestContext, group: Indexed[], tally: { queued: number }): Promise<number> {
  const parsed: { index: number; sequenceNumber: string | undefined; outbox: OutboxRecord }[] = [];
  let failedAt = Number.POSITIVE_INFINITY;
  for (const { index, record } of group) {
    try {
      parsed.push({
        index,
        sequenceNumber: record.dynamodb?.SequenceNumber,
        outbox: outboxRecordFromImage(record.dynamodb!.NewImage!),
      });
    } catch (err) {
      fanOutFailed(record.dynamodb?.SequenceNumber, err);
      failedAt = index;
      break;
    }
  }
  const storeId = parsed.flatMap((p) => (p.outbox.kind === 'event' ? [p.outbox.store_id] : []))[0];
  // A store's records share one pk, so one event's store_id is the group's.
  const batch = storeId
    ? await prepareStoreBatch(
        ctx,
        storeId,
        parsed.map((p) => p.outbox),
      ).catch(() => undefined)
    : undefined;
  // One chain per event: a record the stream (or a replay) repeats runs after its twin, which
  // then finds the delivery queued; different events run side by side. Without the batch's
  // numbers each event takes its own, which must happen in stream order: one chain at a time.
  const chains = new Map<string, typeof parsed>();
  for (const p of parsed) chains.set(p.outbox.event_id, [...(chains.get(p.outbox.event_id) ?? []), p]);
  const failures = await atMost([...chains.values()], batch ? EVENTS_AT_ONCE : 1, async (chain) => {
    for (const { index, sequenceNumber, outbox } of chain) {
      try {
        // Read the tally after the await: `tally.queued += await …` would add to a stale value.
        const queued = await fanOut(ctx, outbox, undefined, batch);
        tally.queued += queued;
      } catch (err) {
        fanOutFailed(sequenceNumber, err);
        return index;
      }
    }
    return Number.POSITIVE_INFINITY;
  });
  return Math.min(failedAt, ...failures);
}

const fanOutFailed = (sequenceNumber: string | undefined, err: unknown) =>
  log('error', 'webhook fan-out failed', { sequence_number: sequenceNumber, ...errorFields(err) });
