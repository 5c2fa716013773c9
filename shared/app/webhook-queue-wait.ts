import { config } from '#shared/config.ts';
import type { DeliveryMessage } from '#domain/webhook/delivery.ts';
import { hopDelaySeconds, queueWait } from '#domain/webhook/retry.ts';
import { sendDeliveryMessage, setVisibility } from '#queue/sqs.ts';
import type { MessageOutcome, ReceivedMessage } from './webhook-delivery.ts';

const plain = (m: DeliveryMessage): DeliveryMessage => ({ event_id: m.event_id, key_id: m.key_id, round: m.round });

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
    await setVisibility(m.receiptHandle, wait.seconds);
    return 'keep';
  }
  // Sent before the received one is deleted: a crash in between leaves two copies, never none.
  await sendDeliveryMessage({ ...plain(message), due_at: dueAt }, wait.seconds);
  return 'done';
}

/** A delayed copy back before its due time: the next hop, with no read of the delivery log. */
export async function nextHop(message: DeliveryMessage, remainingMs: number): Promise<MessageOutcome> {
  await sendDeliveryMessage(message, hopDelaySeconds(remainingMs / 1000, config().webhookQueueWaitLimitSeconds));
  return 'done';
}
