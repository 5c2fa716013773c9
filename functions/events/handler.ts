import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { coldStartTracker, withInvocationContext, log } from '#shared/log.ts';
import { fanOutStreamBatch } from '#app/fan-out.ts';

/**
 * Stream fan-out (table stream → webhook queue): the use case (shared/app/fan-out.ts) fans the
 * batch out store by store; the first record that failed is reported, and Lambda resumes the
 * shard from it. A record that keeps failing is isolated by bisection and parked in the
 * on-failure queue after the retry limit.
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
  const { stores, queued, failedAt } = await fanOutStreamBatch(event.Records);
  const failed = failedAt === null ? undefined : event.Records[failedAt];
  // One line per invocation, not per event, and only when it queued something (docs/observability.md).
  log(queued > 0 ? 'info' : 'debug', 'webhook fan-out', {
    records: event.Records.length,
    stores,
    queued,
    failed_at: failed?.dynamodb?.SequenceNumber ?? null,
  });
  return { batchItemFailures: failed ? [{ itemIdentifier: failed.dynamodb?.SequenceNumber ?? '' }] : [] };
}
