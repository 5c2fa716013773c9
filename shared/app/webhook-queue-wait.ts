import { config } from '#shared/config.ts';
import { messageOf, type DeliveryMessage } from '#domain/webhook/delivery.ts';
import { hopDelaySeconds, queueWait } from '#domain/webhook/retry.ts';
import { deferSeconds, type Lane } from '#domain/webhook/endpoint.ts';
import { sendDeliveryMessage, setVisibility } from '#queue/sqs.ts';
import type { MessageOutcome, ReceivedMessage } from './webhook-delivery.ts';

/**
 * Sleeps a delivery until `dueAt`, `seconds` from now. A short wait is the received message's
 * visibility (`keep`); a long one goes to a delayed copy carrying the due time, and the received
 * message is finished (`done`, deleted): a delayed message is not in flight.
 */
export async function waitOnQueue(
  m: ReceivedMessage,
  message: DeliveryMessage,
  seconds: number,
  dueAt: string,
): Promise<MessageOutcome> {
  const wait = queueWait(seconds, config().webhookQueueWaitLimitSeconds);
  if (wait.via === 'visibility') {
    await setVisibility(m.receiptHandle, wait.seconds, m.lane);
    return 'keep';
  }
  // Sent before the received one is deleted: a crash in between leaves two copies, never none.
  await sendDeliveryMessage({ ...messageOf(message), due_at: dueAt }, wait.seconds, m.lane);
  return 'done';
}

/** A delayed copy back before its due time: the next hop, in its lane, with no read of the delivery log. */
export async function nextHop(
  m: ReceivedMessage,
  message: DeliveryMessage,
  remainingMs: number,
): Promise<MessageOutcome> {
  await sendDeliveryMessage(
    message,
    hopDelaySeconds(remainingMs / 1000, config().webhookQueueWaitLimitSeconds),
    m.lane,
  );
  return 'done';
}

/**
 * A delivery whose endpoint belongs to the other lane (its circuit opened or closed since it was
 * queued): a copy goes to that lane at once and the received one is finished, no attempt made.
 */
export async function moveToLane(message: DeliveryMessage, lane: Lane): Promise<MessageOutcome> {
  await sendDeliveryMessage(messageOf(message), 0, lane);
  return 'done';
}

/**
 * A slow-lane delivery whose endpoint has every attempt slot taken: a copy asks again later
 * (deferSeconds, growing with each deferral) and the received one is finished. A new message, not a
 * longer visibility: a deferral spends none of the queue's receive budget, which belongs to attempts
 * and platform errors (retry.ts).
 */
export async function deferOverCap(message: DeliveryMessage): Promise<MessageOutcome> {
  const deferred = (message.deferred ?? 0) + 1;
  await sendDeliveryMessage(
    { ...messageOf(message), deferred },
    deferSeconds(deferred - 1, config().webhookQueueWaitLimitSeconds),
    'slow',
  );
  return 'done';
}
