import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { errorFields, log } from '../../shared/log.ts';
import { processMessage } from './attempt.ts';

/**
 * Webhook signer (webhook queue → receivers). Messages of a batch are independent deliveries,
 * so they run in parallel (each POST may take its full 10 s). Every message that is not finished
 * is reported as a batch item failure and stays in the queue with the visibility its retry plan
 * set; an unexpected error leaves the queue's own visibility timeout in force.
 *
 * No middy chain: there is no HTTP to normalize and the partial-batch response is the only output.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const kept = await Promise.all(
    event.Records.map(async (record) => {
      try {
        const outcome = await processMessage({
          messageId: record.messageId,
          receiptHandle: record.receiptHandle,
          body: record.body,
          receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
        });
        return outcome === 'keep' ? record.messageId : null;
      } catch (err) {
        log('error', 'webhook message failed', { message_id: record.messageId, ...errorFields(err) });
        return record.messageId;
      }
    }),
  );
  return { batchItemFailures: kept.filter((id): id is string => id !== null).map((itemIdentifier) => ({ itemIdentifier })) };
}
