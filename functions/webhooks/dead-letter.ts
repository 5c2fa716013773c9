import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { recordDeadLetter } from '#app/dead-letter.ts';
import { parseDeliveryMessage } from '#domain/webhook/delivery.ts';
import { errorFields, log, coldStartTracker, invocation, withLogFields } from '#shared/log.ts';
import { newContext, type RequestContext } from '#shared/context.ts';
import { recordDelivery } from '#app/delivery-metrics.ts';
import { processSqsBatch } from './sqs-batch.ts';

/** One dead-lettered message: parsed, handed to the use case (shared/app/dead-letter.ts), its outcome logged and counted. */
async function handleDeadLetter(ctx: RequestContext, record: SQSRecord): Promise<void> {
  let message;
  try {
    message = parseDeliveryMessage(record.body);
  } catch {
    log('error', 'dead letter is not a delivery message; dropped', {
      message_id: record.messageId,
      bytes: record.body.length,
    });
    return;
  }
  const { event_id, key_id, round } = message;
  const outcome = await recordDeadLetter(ctx, message);
  if (outcome.kind === 'finished') {
    log('info', 'dead letter of a finished delivery', { event_id, key_id, round, state: outcome.state });
    return;
  }
  Object.assign(ctx.log, { key_id, store_id: outcome.storeId });
  log('error', 'webhook dead-lettered; marked failed', { event_id, round, recorded: outcome.recorded });
  recordDelivery('dead_lettered');
}

const isColdStart = coldStartTracker();

/**
 * Dead-letter consumer (webhook DLQ → delivery log). A record that cannot be written (the table
 * throttles) is a batch item failure (sqs-batch.ts) and comes back; the DLQ keeps it 14 days.
 */
export function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const cold = isColdStart();
  return processSqsBatch(event, context, (record) => {
    const ctx = newContext(invocation(record, context, cold));
    return withLogFields(ctx.log, async () => {
      try {
        await handleDeadLetter(ctx, record);
      } catch (err) {
        log('error', 'could not record a dead letter', { message_id: record.messageId, ...errorFields(err) });
        throw err;
      }
    });
  });
}
