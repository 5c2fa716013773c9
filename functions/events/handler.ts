import type { Context, DynamoDBBatchResponse, DynamoDBStreamEvent, SQSEvent } from 'aws-lambda';
import { coldStartTracker, log, errorFields, withLogFields } from '#shared/log.ts';
import { newContext, type RequestContext } from '#shared/context.ts';
import { fanOutStreamBatch } from '#app/fan-out.ts';
import { expediteEvent, type ExpressOutcome } from '#app/express-events.ts';
import { parseExpressMessage } from '#domain/event/express.ts';

const isColdStart = coldStartTracker();

/**
 * Event fan-out, fed two ways (docs/webhooks.md, "Order events first"):
 * - the table stream: the use case (shared/app/fan-out.ts) numbers and fans the batch out store
 *   by store; the first record that failed is reported, and Lambda resumes the shard from it. A
 *   record that keeps failing is isolated by bisection and parked in the on-failure queue after
 *   the retry limit;
 * - the express queue: each message names an order event to number and fan out now
 *   (shared/app/express-events.ts). No message is ever reported failed: what the lane could not
 *   do, the stream does.
 *
 * No middy chain: there is no HTTP to normalize and the partial-batch response is the only output.
 */
export function handler(event: DynamoDBStreamEvent | SQSEvent, context?: Context): Promise<DynamoDBBatchResponse> {
  const ctx = newContext({
    request_id: context?.awsRequestId ?? null,
    function_name: context?.functionName ?? null,
    cold_start: isColdStart(),
  });
  return withLogFields(ctx.log, () =>
    isQueueEvent(event) ? handleExpressMessages(ctx, event) : handleStreamRecords(ctx, event),
  );
}

const isQueueEvent = (event: DynamoDBStreamEvent | SQSEvent): event is SQSEvent =>
  event.Records[0]?.eventSource === 'aws:sqs';

async function handleStreamRecords(ctx: RequestContext, event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const { stores, queued, failedAt } = await fanOutStreamBatch(ctx, event.Records);
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

async function handleExpressMessages(ctx: RequestContext, event: SQSEvent): Promise<DynamoDBBatchResponse> {
  const outcomes = await Promise.all(
    event.Records.map(async (record): Promise<ExpressOutcome | { kind: 'failed' }> => {
      try {
        return await expediteEvent(ctx, parseExpressMessage(record.body));
      } catch (err) {
        log('warn', 'express fan-out failed; the table stream delivers the event', {
          message_id: record.messageId,
          ...errorFields(err),
        });
        return { kind: 'failed' };
      }
    }),
  );
  const count = (kind: string) => outcomes.filter((o) => o.kind === kind).length;
  const queued = outcomes.reduce((n, o) => n + (o.kind === 'expedited' ? o.queued : 0), 0);
  log(queued > 0 ? 'info' : 'debug', 'express fan-out', {
    messages: event.Records.length,
    expedited: count('expedited'),
    already_numbered: count('already_numbered'),
    left_to_stream: count('left_to_stream'),
    failed: count('failed'),
    queued,
  });
  return { batchItemFailures: [] };
}
