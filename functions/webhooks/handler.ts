import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { config } from '#shared/config.ts';
import { platformErrorBackoffSeconds } from '#domain/webhook/retry.ts';
import { laneOfSource, setVisibility } from '#queue/sqs.ts';
import { errorFields, log, coldStartTracker, invocation, withLogFields } from '#shared/log.ts';
import { newContext } from '#shared/context.ts';
import { keyToPing, processMessage, type SignerPorts } from '#app/webhook-delivery.ts';
import { publishOperationalEvent } from './operational-event.ts';
import { sendAttempt } from './send.ts';
import { processSqsBatch } from './sqs-batch.ts';
import { pingDestination, type PingResult } from './ping.ts';
import { isAwsDestination } from '#domain/key/destination.ts';
import { startTracing } from './tracing.ts';

/**
 * An unexpected error (throttling, a bad deploy, an unreadable message) is not the receiver's
 * fault: no attempt is counted, and the message comes back after an exponential backoff instead
 * of the queue's visibility timeout, so an outage spends the receive budget slowly (retry.ts).
 * If even the visibility change fails, the queue's own timeout applies.
 */
async function backOff(record: SQSRecord, receiveCount: number, err: unknown): Promise<void> {
  const seconds = platformErrorBackoffSeconds(receiveCount, config().webhookQueueWaitLimitSeconds);
  log('error', 'webhook message failed; backing off', {
    message_id: record.messageId,
    receive_count: receiveCount,
    retry_in_s: seconds,
    ...errorFields(err),
  });
  await setVisibility(record.receiptHandle, seconds, laneOfSource(record.eventSourceARN)).catch((e: unknown) =>
    log('error', 'could not back off a webhook message', errorFields(e)),
  );
}

/**
 * A message the signer keeps in the queue on purpose: its next attempt is scheduled by the
 * visibility the attempt set (retry.ts), so it is reported as a batch item failure.
 */
class KeptForRetry extends Error {}

const isColdStart = coldStartTracker();
/** The signed POST and the operational event stay here (KMS, HTTP, SNS); the use cases get them as ports. */
const ports: SignerPorts = { send: sendAttempt, announce: publishOperationalEvent };

/** The admin's ask to ping a key's SQS queue or EventBridge bus under the signer's role (functions/webhooks/ping.ts). */
export interface PingRequest {
  ping: { key_id: number };
}
const isPingRequest = (event: SQSEvent | PingRequest): event is PingRequest =>
  typeof (event as PingRequest).ping?.key_id === 'number';

/**
 * Webhook signer (webhook queues → receivers), on both lanes' queues: a record's queue is its lane. Messages of a batch are independent deliveries,
 * so they run in parallel (each POST may take its full 10 s). Every message that is not finished
 * is reported as a batch item failure (Powertools' batch utility, sqs-batch.ts) and stays in the
 * queue with the visibility its retry plan (or its backoff) set.
 *
 * No middy chain: there is no HTTP to normalize and the partial-batch response is the only output.
 */
export async function handler(event: SQSEvent, context?: Context): Promise<SQSBatchResponse>;
export async function handler(event: PingRequest, context?: Context): Promise<PingResult>;
export async function handler(
  event: SQSEvent | PingRequest,
  context?: Context,
): Promise<SQSBatchResponse | PingResult> {
  if (isPingRequest(event)) {
    const key = await keyToPing(newContext(), event.ping.key_id);
    if (!key || !isAwsDestination(key.destination))
      throw new Error(`key ${event.ping.key_id} has no SQS or EventBridge destination`);
    return pingDestination(key, key.destination);
  }
  const cold = isColdStart();
  await startTracing();
  return processSqsBatch(event, context, (record) => {
    const ctx = newContext(invocation(record, context, cold));
    return withLogFields(ctx.log, async () => {
      const receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
      let outcome: Awaited<ReturnType<typeof processMessage>>;
      try {
        outcome = await processMessage(
          ctx,
          {
            messageId: record.messageId,
            receiptHandle: record.receiptHandle,
            body: record.body,
            receiveCount,
            lane: laneOfSource(record.eventSourceARN),
          },
          ports,
        );
      } catch (err) {
        await backOff(record, receiveCount, err);
        throw err;
      }
      if (outcome === 'keep') throw new KeptForRetry(record.messageId);
    });
  });
}
