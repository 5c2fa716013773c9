/**
 * The local stand-in for an SQS event-source mapping (see webhook-pipeline.ts): ReceiveMessage
 * (batch ≤ 10) → SQSEvent → handler; what succeeded is deleted, the batch item failures are left
 * to their visibility timeouts (and so to the queue's redrive policy). One poller serves one
 * queue: one of the local stack's (the fast and slow lanes, the express queue, the dead-letter
 * queue) or a rehearsal mapping's.
 */
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { config } from '#shared/config.ts';
import { sqs } from '#queue/sqs.ts';
import { errorFields, log as logJson } from '#shared/log.ts';
import { sleep } from './sleep.ts';

/** The message as Lambda hands it over, with the attributes the signer reads. */
function toSqsRecord(m: Message, queueArn: string, region: string): SQSRecord {
  const a = m.Attributes ?? {};
  return {
    messageId: m.MessageId ?? '',
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? '000000000000',
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

type Handle = (event: SQSEvent) => Promise<SQSBatchResponse>;

/**
 * One message on its own: handed over as a one-record event and deleted the moment it is decided,
 * so a message whose receiver hangs holds nothing but its own slot.
 */
async function handleOne(
  m: Message,
  queue: { url: string; arn: string },
  handle: Handle,
  client: SQSClient,
): Promise<void> {
  try {
    const out = await handle({ Records: [toSqsRecord(m, queue.arn, config().region)] });
    if (out.batchItemFailures.length > 0) return;
    await client.send(new DeleteMessageCommand({ QueueUrl: queue.url, ReceiptHandle: m.ReceiptHandle }));
  } catch (err) {
    // Not deleted means received again later; the delivery log makes that a no-op.
    logJson('error', 'queue message not finished; it stays queued', errorFields(err));
  }
}

/**
 * One poller: receive a batch, hand it to the handler, delete what it did not report as failed.
 * With `concurrent` (the local stack's pollers), messages are handled one by one, up to that many
 * at once, and the poller receives again as soon as a slot is free: no message waits for another
 * (docs/webhooks.md, "Isolation"). Without it, a batch is one event, as a Lambda mapping hands it
 * over (the rehearsal imitates AWS exactly).
 */
export async function pollQueue(
  queue: { url: string; arn: string },
  handle: Handle,
  signal: AbortSignal,
  /** The client to poll with (default: the stack's), the mapping's batch size, and the per-message mode. */
  mapping: { client?: SQSClient; batchSize?: number; concurrent?: number } = {},
): Promise<void> {
  // This poller's own signal, aborted with `signal`. A call in flight listens on the signal it is
  // given (the SDK's retry race), and a stack stops all its pollers with one signal: the
  // rehearsal's 14 long polls (up to 4 per queue mapping) put 14 listeners on it, past Node's leak
  // warning at 10, with no leak. AbortSignal.any adds no listener to `signal`, so each signal counts
  // what one poller has in flight and the warning keeps pointing at a real leak; raising the limit
  // on the shared signal would instead have to grow with every mapping the template gains.
  const stopped = AbortSignal.any([signal]);
  const region = config().region;
  const client = async () => mapping.client ?? (await sqs());
  const running = new Set<Promise<void>>();
  while (!stopped.aborted) {
    if (mapping.concurrent !== undefined && running.size >= mapping.concurrent) {
      await Promise.race(running);
      continue;
    }
    let messages: Message[];
    try {
      const out = await (await client()).send(
        new ReceiveMessageCommand({
          QueueUrl: queue.url,
          MaxNumberOfMessages: Math.min(
            mapping.batchSize ?? 10,
            10,
            mapping.concurrent === undefined ? 10 : mapping.concurrent - running.size,
          ),
          WaitTimeSeconds: 20,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: stopped },
      );
      messages = out.Messages ?? [];
    } catch (err) {
      if (stopped.aborted) break;
      logJson('error', 'local queue poller failed; retrying', errorFields(err));
      await sleep(1000, stopped);
      continue;
    }
    if (messages.length === 0) continue;
    if (mapping.concurrent !== undefined) {
      for (const m of messages) {
        const p = handleOne(m, queue, handle, await client()).finally(() => running.delete(p));
        running.add(p);
      }
      continue;
    }
    const event: SQSEvent = { Records: messages.map((m) => toSqsRecord(m, queue.arn, region)) };
    let failed: Set<string>;
    try {
      failed = new Set((await handle(event)).batchItemFailures.map((f) => f.itemIdentifier));
    } catch (err) {
      logJson('error', 'queue handler threw; the whole batch stays queued', errorFields(err));
      continue;
    }
    const finished = messages.filter((m) => m.MessageId && !failed.has(m.MessageId));
    if (finished.length === 0) continue;
    try {
      await (await client()).send(
        new DeleteMessageBatchCommand({
          QueueUrl: queue.url,
          Entries: finished.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    } catch (err) {
      // Not deleted means received again later; the delivery log makes that a no-op.
      logJson('error', 'could not delete finished queue messages', errorFields(err));
    }
  }
  // Stopping: let what is under way finish (each is bounded by the POST timeout).
  await Promise.all(running);
}
