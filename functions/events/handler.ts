import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { coldStartTracker, withInvocationContext } from '#shared/log-context.ts';
import { outboxRecordFromImage } from '#db/outbox-stream.ts';
import { isOutboxInsert } from '#db/outbox-stream-filter.ts';
import { errorFields, log } from '#shared/log.ts';
import { fanOut } from './fan-out.ts';

/**
 * Stream fan-out (table stream → webhook queue). The event-source mapping already filters on
 * outbox INSERTs; the same filter runs here too, so a mapping without it (or a test) cannot feed
 * other writes through. Records are handled in order, and the first failure ends the batch:
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

async function handleRecords(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  for (const record of event.Records) {
    if (!isOutboxInsert(record) || !record.dynamodb?.NewImage) continue;
    try {
      await fanOut(outboxRecordFromImage(record.dynamodb.NewImage));
    } catch (err) {
      log('error', 'webhook fan-out failed', { sequence_number: record.dynamodb.SequenceNumber, ...errorFields(err) });
      return { batchItemFailures: [{ itemIdentifier: record.dynamodb.SequenceNumber ?? '' }] };
    }
  }
  return { batchItemFailures: [] };
}
