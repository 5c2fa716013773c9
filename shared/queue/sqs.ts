import type { SQSClient } from '@aws-sdk/client-sqs';
import { config } from '#shared/config.ts';
import { awsClientBuilt, awsClientDropped } from '#shared/aws-clients.ts';
import type { DeliveryMessage } from '#domain/webhook/delivery.ts';
import type { Lane, ProbeMessage } from '#domain/webhook/endpoint.ts';
import type { ExpressMessage } from '#domain/event/express.ts';

/**
 * The webhook queue (WEBHOOK_QUEUE_URL), in this client's region. The endpoint comes from the
 * region, or from AWS_ENDPOINT_URL_SQS where an emulator sets one (the local stack, the
 * rehearsal), never from the queue URL's host: an emulator's URLs (fauxqs:
 * `http://sqs.us-east-1.127.0.0.1:PORT/…`) are not valid URLs to the SDK's parser.
 */
let client: SQSClient | undefined;
let clientFor: string | undefined;

/**
 * The SQS client package, loaded at first use (~25 ms of a cold start on this machine's bench,
 * `BENCH_ONLY=bundles npm run bench`): the signer needs it only to delay a retry or to queue a
 * probe, so a container that only delivers never loads it; the fan-out loads it with the first
 * delivery it queues. A static import would load it with the bundle (test/infra/bundles.test.ts).
 */
const sdk = () => import('@aws-sdk/client-sqs');

export function webhookQueueUrl(lane: Lane = 'fast'): string {
  const url = lane === 'fast' ? config().webhookQueueUrl : config().webhookSlowQueueUrl;
  if (!url) throw new Error(`${lane === 'fast' ? 'WEBHOOK_QUEUE_URL' : 'WEBHOOK_SLOW_QUEUE_URL'} is not set`);
  return url;
}

/**
 * The lane a received message came from, by its queue's ARN (the event source mapping's
 * `eventSourceARN`): the slow lane's queue has the name of WEBHOOK_SLOW_QUEUE_URL's last path
 * segment (an SQS URL ends in the queue's name, an ARN too), every other queue is the fast lane.
 */
export function laneOfSource(eventSourceArn: string): Lane {
  const slow = config().webhookSlowQueueUrl;
  if (!slow) return 'fast';
  return eventSourceArn.split(':').at(-1) === slow.split('/').at(-1) ? 'slow' : 'fast';
}

/** Built once per process and queue URLs (a Lambda container, or the local stack). */
export async function sqs(): Promise<SQSClient> {
  const url = `${config().webhookQueueUrl} ${config().expressQueueUrl}`;
  if (client && clientFor === url) return client;
  const { SQSClient } = await sdk();
  if (client && clientFor === url) return client;
  client?.destroy();
  awsClientDropped(client);
  client = awsClientBuilt(new SQSClient({ region: config().region, useQueueUrlAsEndpoint: false, maxAttempts: 4 }));
  clientFor = url;
  return client;
}

export function resetSqsClient(): void {
  client?.destroy();
  awsClientDropped(client);
  client = undefined;
  clientFor = undefined;
}

/**
 * Queues a delivery in `lane`; `delaySeconds` (≤ 900) keeps it invisible, and out of the in-flight
 * count, that long. The endpoint (the key) is the message group: both queues are standard queues,
 * which SQS makes fair queues by the group, so one endpoint's backlog does not lengthen the wait
 * of other endpoints' messages.
 */
export async function sendDeliveryMessage(
  message: DeliveryMessage | ProbeMessage,
  delaySeconds = 0,
  lane: Lane = 'fast',
): Promise<void> {
  const [{ SendMessageCommand }, queue] = await Promise.all([sdk(), sqs()]);
  await queue.send(
    new SendMessageCommand({
      QueueUrl: webhookQueueUrl(lane),
      MessageBody: JSON.stringify(message),
      MessageGroupId: String(message.key_id),
      ...(delaySeconds > 0 ? { DelaySeconds: delaySeconds } : {}),
    }),
  );
}

/** Sleeps one received message of `lane`: it comes back after `seconds` (0: at once). */
export async function setVisibility(receiptHandle: string, seconds: number, lane: Lane = 'fast'): Promise<void> {
  const [{ ChangeMessageVisibilityCommand }, queue] = await Promise.all([sdk(), sqs()]);
  await queue.send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: webhookQueueUrl(lane),
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: seconds,
    }),
  );
}

/**
 * Asks the express lane (EXPRESS_QUEUE_URL) to number and fan out an order event now instead of
 * after the table stream reaches it (docs/webhooks.md, "Order events first"). The store is the
 * message group (a fair queue per store). False when no lane is configured (a script against the
 * table): the stream alone delivers the event.
 */
export async function sendExpressMessage(message: ExpressMessage, signal?: AbortSignal): Promise<boolean> {
  const url = config().expressQueueUrl;
  if (!url) return false;
  const [{ SendMessageCommand }, queue] = await Promise.all([sdk(), sqs()]);
  await queue.send(
    new SendMessageCommand({ QueueUrl: url, MessageBody: JSON.stringify(message), MessageGroupId: message.store_id }),
    { abortSignal: signal },
  );
  return true;
}
