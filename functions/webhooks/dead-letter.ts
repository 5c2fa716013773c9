import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { getDelivery, updateDelivery } from '#db/webhook/delivery.repo.ts';
import { parseDeliveryMessage } from '#domain/webhook/delivery.ts';
import {
  errorFields,
  log,
  addInvocationContext,
  coldStartTracker,
  invocation,
  withInvocationContext,
} from '#shared/log.ts';
import { recordDelivery } from './delivery-metrics.ts';
import { processSqsBatch } from './sqs-batch.ts';

export const DEAD_LETTER_ERROR =
  'dead-lettered: the signer could not process this delivery (a platform error, see its logs); redeliver it once fixed';

/**
 * One dead-lettered message: the queue gave up on it after maxReceiveCount receives that never
 * finished it (platform errors). A pending delivery of its round becomes `failed` with that
 * reason, so nothing stays `pending` forever; a delivered, failed or superseded one is left as it
 * is. `webhooks redeliver` starts it again.
 */
async function recordDeadLetter(record: SQSRecord): Promise<void> {
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
  const { event_id: eventId, key_id: keyId, round } = message;
  const delivery = await getDelivery(keyId, eventId);
  if (!delivery || delivery.round !== round || delivery.state !== 'pending') {
    log('info', 'dead letter of a finished delivery', {
      event_id: eventId,
      key_id: keyId,
      round,
      state: delivery?.state ?? null,
    });
    return;
  }
  const now = new Date().toISOString();
  const updated = await updateDelivery(keyId, eventId, round, {
    state: 'failed',
    attempted: false,
    last_error: DEAD_LETTER_ERROR,
    next_attempt_at: null,
    now,
  });
  addInvocationContext({ key_id: keyId, store_id: delivery.store_id });
  log('error', 'webhook dead-lettered; marked failed', { event_id: eventId, round, recorded: updated !== undefined });
  recordDelivery('dead_lettered');
}

/**
 * Dead-letter consumer (webhook DLQ → delivery log). A record that cannot be written (the table
 * throttles) is a batch item failure (sqs-batch.ts) and comes back; the DLQ keeps it 14 days.
 */
const isColdStart = coldStartTracker();

export function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse> {
  const cold = isColdStart();
  return processSqsBatch(event, context, (record) =>
    withInvocationContext(invocation(record, context, cold), async () => {
      try {
        await recordDeadLetter(record);
      } catch (err) {
        log('error', 'could not record a dead letter', { message_id: record.messageId, ...errorFields(err) });
        throw err;
      }
    }),
  );
}
