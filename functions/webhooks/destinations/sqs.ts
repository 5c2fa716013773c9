import type { AwsDestination } from '#domain/key/destination.ts';
import { regionOf } from '#domain/key/destination.ts';
import type { PostResult } from '#domain/webhook/deliverable.ts';
import {
  deduplicationId,
  messageAttributes,
  messageGroupId,
  sequenceInBody,
  SQS_MAX_MESSAGE_BYTES,
  sqsMessageSize,
  thinBody,
} from '#domain/webhook/destination.ts';
import type { DestinationSend } from './send-input.ts';
import { refusedAttempt } from './aws-error.ts';
import { roleCredentials } from './credentials.ts';
import { sqsClientFor } from './clients.ts';

/**
 * One event onto the integrator's queue, as the role assumed with the key's external id: the body
 * the webhook would POST (a thin event when it and its attributes pass SQS's 256 KiB), the event id,
 * type and sequence as message attributes, and on a FIFO queue the store and family as the message
 * group and the event id as the deduplication id (docs/destinations.md).
 */
export async function sendToQueue(send: DestinationSend): Promise<PostResult> {
  const { keyId, externalId, delivery } = send;
  const destination = send.destination as Extract<AwsDestination, { kind: 'sqs' }>;
  const started = Date.now();
  try {
    await roleCredentials(destination.role_arn, externalId, keyId);
  } catch (err) {
    return refusedAttempt(`assume role ${destination.role_arn}`, err, started);
  }
  const attributes = messageAttributes(delivery.event_id, delivery.event_type, sequenceInBody(delivery.body));
  const body =
    sqsMessageSize(delivery.body, attributes) > SQS_MAX_MESSAGE_BYTES
      ? thinBody(delivery.body, SQS_MAX_MESSAGE_BYTES, 'an SQS message')
      : delivery.body;
  const [{ SendMessageCommand }, client] = await Promise.all([
    import('@aws-sdk/client-sqs'),
    sqsClientFor(regionOf(destination), destination.role_arn, externalId, keyId),
  ]);
  try {
    const out = await client.send(
      new SendMessageCommand({
        QueueUrl: destination.queue_url,
        MessageBody: body,
        MessageAttributes: attributes,
        ...(destination.fifo
          ? {
              MessageGroupId: messageGroupId(delivery.store_id, delivery.event_type),
              MessageDeduplicationId: deduplicationId(delivery.event_id, delivery.round),
            }
          : {}),
      }),
    );
    return {
      status: out.$metadata.httpStatusCode ?? 200,
      error: null,
      retryAfterSeconds: undefined,
      ms: Date.now() - started,
    };
  } catch (err) {
    return refusedAttempt(`SendMessage to ${destination.queue_arn}`, err, started);
  }
}
