import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { coldStartTracker, withInvocationContext, errorFields, log } from '#shared/log.ts';
import { outboxRecordFromImage, type OutboxRecord } from '#db/event/outbox-stream.ts';
import { isOutboxInsert } from '#db/event/outbox-stream-filter.ts';
import { fanOut, prepareStoreBatch } from './fan-out.ts';

/**
 * Stream fan-out (table stream → webhook queue). The event-source mapping already filters on
 * outbox INSERTs; the same filter runs here too, so a mapping without it (or a test) cannot feed
 * other writes through. Each store's records are handled in order, and the first failure ends the batch:
 * Lambda resumes the shard from the reported sequence number, so later records would be replayed
 * anyway (replays are harmless, the delivery log makes them idempotent). A record that keeps
 * failing is isolated by bisection and parked in the on-failure queue after the retry limit.
 *
 * No middy chain: there is no HTTP to normalize and the partial-batch response is the only output.
 */
const isColdStart = coldStartTracker();

export function handler(event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> {
  const fields = {
    request_id: context?.awsRequestId ?? null,
    function_name: context?.functionName ?? null,
    cold_start: isColdStart(),
    key_id: null,
    store_id: null,
  };
  return withInvocationContext(fields, () => handleRecords(event));
}

/** Stores fanned out at once: each store's records stay in order, stores do not wait on each other. */
const STORES_AT_ONCE = 8;

type Indexed = { index: number; record: DynamoDBStreamEvent['Records'][number] };

async function handleRecords(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  // Records of one store keep their order (numbering and delivery follow it); different stores'
  // records are independent, so one store's backlog does not hold every other store's deliveries.
  const byStore = new Map<string, Indexed[]>();
  for (const [index, record] of event.Records.entries()) {
    if (!isOutboxInsert(record) || !record.dynamodb?.NewImage) continue;
    const store = String(record.dynamodb.NewImage.pk?.S ?? '');
    byStore.set(store, [...(byStore.get(store) ?? []), { index, record }]);
  }
  // The first failure in stream order ends the batch: Lambda resumes the shard from it, and what
  // other stores handled after it is replayed harmlessly (numbering and the delivery log are idempotent).
  let firstFailure = Number.POSITIVE_INFINITY;
  const groups = [...byStore.values()];
  const tally = { queued: 0 };
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(STORES_AT_ONCE, groups.length) }, async () => {
      while (next < groups.length) firstFailure = Math.min(firstFailure, await fanOutStore(groups[next++]!, tally));
    }),
  );
  const failed = event.Records[firstFailure];
  // One line per invocation, not per event, and only when it queued something (docs/observability.md).
  log(tally.queued > 0 ? 'info' : 'debug', 'webhook fan-out', {
    records: event.Records.length,
    stores: groups.length,
    queued: tally.queued,
    failed_at: failed?.dynamodb?.SequenceNumber ?? null,
  });
  return { batchItemFailures: failed ? [{ itemIdentifier: failed.dynamodb?.SequenceNumber ?? '' }] : [] };
}

/**
 * One store's records in order: numbered together first; if that fails (a record that cannot be
 * numbered), one by one, so the failure is pinned to its record. Answers the index of the first
 * record that failed, or Infinity.
 */
async function fanOutStore(group: Indexed[], tally: { queued: number }): Promise<number> {
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
        storeId,
        parsed.map((p) => p.outbox),
      ).catch(() => undefined)
    : undefined;
  for (const { index, sequenceNumber, outbox } of parsed) {
    try {
      tally.queued += await fanOut(outbox, undefined, batch);
    } catch (err) {
      fanOutFailed(sequenceNumber, err);
      return index;
    }
  }
  return failedAt;
}

const fanOutFailed = (sequenceNumber: string | undefined, err: unknown) =>
  log('error', 'webhook fan-out failed', { sequence_number: sequenceNumber, ...errorFields(err) });
