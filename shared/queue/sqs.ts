import { ChangeMessageVisibilityCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config.ts';
import type { DeliveryMessage } from '../domain/webhook/delivery.ts';
import type { ProbeMessage } from '../domain/webhook/endpoint.ts';

/**
 * The webhook queue (WEBHOOK_QUEUE_URL). In AWS the client is the default one. A queue URL that
 * is not on amazonaws.com belongs to the local stack's emulator (fauxqs, whose URLs look like
 * `http://sqs.us-east-1.127.0.0.1:PORT/000000000000/webhooks`): the client then talks to the host
 * the URL names, without the `sqs.<region>.` label, with the dummy credentials it accepts.
 */
function emulatorEndpoint(queueUrl: string): string | undefined {
  // Not `new URL()`: a host like `sqs.us-east-1.127.0.0.1` ends in a number, which the WHATWG
  // parser takes for a malformed IPv4 address.
  const m = /^(https?):\/\/(?:sqs\.[a-z0-9-]+\.)?([^/:]+)(:\d+)?\//i.exec(queueUrl);
  if (!m) throw new Error(`WEBHOOK_QUEUE_URL is not a queue URL: ${queueUrl}`);
  if (/(^|\.)amazonaws\.com$/i.test(m[2] ?? '')) return undefined;
  return `${m[1]}://${m[2]}${m[3] ?? ''}`;
}

let client: SQSClient | undefined;
let clientFor: string | undefined;

export function webhookQueueUrl(): string {
  const url = config().webhookQueueUrl;
  if (!url) throw new Error('WEBHOOK_QUEUE_URL is not set: the webhook queue is unknown');
  return url;
}

/** Built once per process and queue URL (a Lambda container, or the local stack). */
export function sqs(): SQSClient {
  const url = webhookQueueUrl();
  if (client && clientFor === url) return client;
  client?.destroy();
  const endpoint = emulatorEndpoint(url);
  client = new SQSClient({
    region: config().region,
    ...(endpoint ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 4,
  });
  clientFor = url;
  return client;
}

export function resetSqsClient(): void {
  client?.destroy();
  client = undefined;
  clientFor = undefined;
}

/** Queues a delivery; `delaySeconds` (≤ 900) keeps it invisible, and out of the in-flight count, that long. */
export async function sendDeliveryMessage(message: DeliveryMessage | ProbeMessage, delaySeconds = 0): Promise<void> {
  await sqs().send(
    new SendMessageCommand({
      QueueUrl: webhookQueueUrl(),
      MessageBody: JSON.stringify(message),
      ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
    }),
  );
}

/** Sleeps one received message: it comes back after `seconds` (0: at once). */
export async function setVisibility(receiptHandle: string, seconds: number): Promise<void> {
  await sqs().send(new ChangeMessageVisibilityCommand({ QueueUrl: webhookQueueUrl(), ReceiptHandle: receiptHandle, VisibilityTimeout: seconds }));
}
