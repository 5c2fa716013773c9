import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { updateDelivery } from '../../shared/db/delivery.repo.ts';
import { parseDeliveryMessage } from '../../shared/domain/webhook/delivery.ts';
import { errorFields, log } from '../../shared/log.ts';

/**
 * Placeholder from the infra branch so the CDK app can wire the dead-letter consumer; the
 * runtime branch owns this file. A dead-lettered message ends its delivery's round as `failed`
 * (a redelivery that started a newer round is left alone); a body that is not a delivery
 * message is logged and dropped.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const failures: { itemIdentifier: string }[] = [];
  for (const record of event.Records) {
    try {
      const m = parseDeliveryMessage(record.body);
      const now = new Date().toISOString();
      await updateDelivery(m.key_id, m.event_id, m.round, {
        state: 'failed',
        attempted: false,
        last_error: 'dead-lettered: the queue gave up on the message',
        next_attempt_at: null,
        now,
      });
    } catch (err) {
      if (err instanceof SyntaxError || (err instanceof Error && err.message === 'not a delivery message')) {
        log('warn', 'dead letter dropped', { message_id: record.messageId });
        continue;
      }
      log('error', 'dead letter failed', { message_id: record.messageId, ...errorFields(err) });
      failures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures: failures };
}
