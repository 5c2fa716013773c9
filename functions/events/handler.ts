import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { coldStartTracker, withInvocationContext } from '#shared/log-context.ts';
import { outboxRecordFromImage } from '#db/outbox-stream.ts';
import { isOutboxInsert } from '#db/outbox-stream-filter.ts';
import { errorFields, log } from '#shared/log.ts';
import { fanOut } from './fan-out.ts';

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

async function handleRecords(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  // Records of one store keep their order (numbering and delivery follow it); different stores'
  // records are independent, so one store's backlog (a bulk load numbers one event per product)
  // does not hold every other store's deliveries behind it.
  const byStore = new Map<string, { index: number; record: (typeof event.Records)[number] }[]>();
  for (const [index, record] of event.Records.entries()) {
    if (!isOutboxInsert(record) || !record.dynamodb?.NewImage) continue;
    const store = String(record.dynamodb.NewImage.pk?.S ?? '');
    byStore.set(store, [...(byStore.get(store) ?? []), { index, record }]);
  }
  // The first failure in stream order ends the batch: Lambda resumes the shard from it, and what
  // other stores handled after it is replayed harmlessly (numbering and the delivery log are idempotent).
  let firstFailure = Number.POSITIVE_INFINITY;
  const groups = [...byStore.values()];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(STORES_AT_ONCE, groups.length) }, async () => {
      while (next < groups.length) {
        for (const { index, record } of groups[next++]!) {
          if (index > firstFailure) break;
          try {
            await fanOut(outboxRecordFromImage(record.dynamodb!.NewImage!));
          } catch (err) {
            log('error', 'webhook fan-out failed', {
              sequence_number: record.dynamodb?.SequenceNumber,
              ...errorFields(err),
            });
            firstFailure = Math.min(firstFailure, index);
            break;
          }
        }
      }
    }),
  );
  const failed = event.Records[firstFailure];
  return { batchItemFailures: failed ? [{ itemIdentifier: failed.dynamodb?.SequenceNumber ?? '' }] : [] };
}
