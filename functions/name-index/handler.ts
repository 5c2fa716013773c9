import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { coldStartTracker, errorFields, log, withLogFields } from '#shared/log.ts';
import { newContext, type RequestContext } from '#shared/context.ts';
import { indexNameRecords } from '#app/name-index.ts';

const isColdStart = coldStartTracker();

/**
 * Name indexer (table stream → filter[name]'s trigram postings): the use case indexes the batch
 * (shared/app/name-index.ts) a chunk at a time; a failure is logged and reported from the failing
 * chunk's first record, so the chunks before it are not indexed again.
 */
export function handler(event: DynamoDBStreamEvent, context?: Context): Promise<DynamoDBBatchResponse> {
  const ctx = newContext({
    request_id: context?.awsRequestId ?? null,
    function_name: context?.functionName ?? null,
    cold_start: isColdStart(),
  });
  return withLogFields(ctx.log, () => indexRecords(ctx, event));
}

async function indexRecords(ctx: RequestContext, event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const outcome = await indexNameRecords(ctx, event.Records);
  if (outcome.ok) return { batchItemFailures: [] };
  log('error', 'name indexing failed', {
    sequence_number: outcome.sequenceNumber,
    indexed_before: outcome.indexed,
    ...errorFields(outcome.error),
  });
  return { batchItemFailures: [{ itemIdentifier: outcome.retryFrom }] };
}
