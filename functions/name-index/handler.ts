import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { coldStartTracker, withInvocationContext, errorFields, log } from '#shared/log.ts';
import { isPendingNameWrite, pendingNameFromImage } from '#db/name-index/stream.ts';
import { indexPendingNames } from '#db/name-index/repo.ts';

/**
 * Name indexer (table stream → filter[name]'s trigram postings, see shared/db/name-index/repo.ts).
 * The mapping passes only pending-name writes; the same filter runs here too. A batch is indexed
 * together (one read of every pending entry, postings written 25 at a time); if it fails, the
 * whole batch is reported failed from its first record and comes again: indexing is idempotent,
 * and until it succeeds the search reads the pending entries, so no result is ever wrong.
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
  return withInvocationContext(fields, () => indexRecords(event));
}

async function indexRecords(event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const records = event.Records.filter((r) => isPendingNameWrite(r) && r.dynamodb?.NewImage);
  if (records.length === 0) return { batchItemFailures: [] };
  try {
    await indexPendingNames(records.map((r) => pendingNameFromImage(r.dynamodb!.NewImage!)));
    return { batchItemFailures: [] };
  } catch (err) {
    log('error', 'name indexing failed', {
      sequence_number: records[0]!.dynamodb!.SequenceNumber,
      ...errorFields(err),
    });
    return { batchItemFailures: [{ itemIdentifier: records[0]!.dynamodb!.SequenceNumber ?? '' }] };
  }
}
