import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';

/**
 * An SQS batch through Powertools' batch utility: every record is handled at once (deliveries
 * are independent), and a record whose handler throws is reported as a batch item failure, so
 * it stays in the queue with the visibility its handler set and comes back.
 *
 * A batch in which every record failed is still a partial response, not a thrown error: for the
 * signer a failure is often a retry it scheduled on purpose (a receiver answering 5xx), which is
 * no invocation error and must not count as one in the function's error metrics.
 *
 * A processor per invocation: it holds the batch's records and failures, and the local stack runs
 * invocations of one function concurrently in one process, where a shared one would mix batches.
 */
export function processSqsBatch(
  event: SQSEvent,
  context: Context | undefined,
  handle: (record: SQSRecord) => Promise<void>,
): Promise<SQSBatchResponse> {
  return processPartialResponse(event, handle, new BatchProcessor(EventType.SQS), {
    context,
    throwOnFullBatchFailure: false,
  });
}
