/**
 * The local stack's webhook path: the same two Lambdas the CDK stack deploys, fed the way their
 * event-source mappings feed them in AWS.
 *
 *   DynamoDB Local stream ──(outbox INSERT filter)──▶ functions/events ──▶ fauxqs queue
 *   fauxqs queue ──(ReceiveMessage, batch ≤ 10)──▶ functions/webhooks ──▶ receivers
 *                 └──(maxReceiveCount)──▶ dead-letter queue
 *
 * Stream side: DescribeStream (again every few seconds, to follow new shards, children after
 * their parents), GetShardIterator (AFTER_SEQUENCE_NUMBER from the saved position, else
 * TRIM_HORIZON: LATEST would lose what was written while the stack was down) and GetRecords with
 * iterator chaining. Only records that pass OUTBOX_STREAM_FILTER reach the handler, as a
 * DynamoDBStreamEvent; a reported failure is retried from its sequence number, and a record that
 * still fails after STREAM_RETRY_ATTEMPTS is logged and skipped (what bisect + on-failure
 * destination do in AWS). The position is saved in the table after each batch that reached the
 * handler, so a restart neither loses nor replays everything.
 *
 * Queue side: fauxqs (a real SQS-protocol server, in this process) with the redrive policy the
 * CDK queue has; a few concurrent pollers hand SQSEvents to the signer, delete what succeeded
 * and leave the batch item failures to their visibility timeouts. fauxqs keeps messages in
 * memory only, so a start queues every pending delivery again (the signer's due check keeps
 * their schedule).
 */
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord, SQSEvent, SQSRecord } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { config, resetConfig } from '../config.ts';
import { scanPendingDeliveries, markQueued } from '../db/delivery.repo.ts';
import { loadStreamPosition, saveStreamPosition, type ShardPosition, type StreamPosition } from '../db/stream-position.repo.ts';
import { isOutboxInsert } from '../domain/webhook/stream-filter.ts';
import { maxReceiveCount } from '../domain/webhook/retry.ts';
import { resetSqsClient, sendDeliveryMessage, sqs, webhookQueueUrl } from '../queue/sqs.ts';
import { errorFields, log as logJson } from '../log.ts';
import { handler as fanOutHandler } from '../../functions/events/handler.ts';
import { handler as signerHandler } from '../../functions/webhooks/handler.ts';

export interface WebhookPipelineOptions {
  /** Without one, only the queue side runs (tests that drive the fan-out Lambda themselves). */
  streamArn: string | undefined;
  /** The DynamoDB endpoint; DynamoDB Local serves its Streams API on the same port. */
  endpoint: string;
  log?: (line: string) => void;
  /** Queue again the deliveries left pending by a previous run (default true). */
  requeuePending?: boolean;
}

export interface WebhookPipeline {
  queueUrl: string;
  deadLetterQueueUrl: string;
  stop(): Promise<void>;
}

/** Idle pause between GetRecords rounds (Lambda polls a shard about four times a second). */
const STREAM_IDLE_MS = 100;
const DESCRIBE_EVERY_MS = 5000;
const STREAM_RETRY_ATTEMPTS = 3;
/** Matches the CDK queue: well above the signer's run time (10 s POST timeout). */
const QUEUE_VISIBILITY_SECONDS = 60;
const SQS_POLLERS = 4;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', wake);
      resolve();
    };
    const timer = setTimeout(wake, ms);
    signal?.addEventListener('abort', wake, { once: true });
  });

/** The record as Lambda hands it over: JSON types (epoch seconds, base64 binaries) and the ARN. */
function toLambdaRecord(r: StreamRecord, streamArn: string): DynamoDBRecord {
  const json = JSON.parse(
    JSON.stringify(r, (_k, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v)),
  ) as DynamoDBRecord;
  const created = r.dynamodb?.ApproximateCreationDateTime;
  if (json.dynamodb && created) json.dynamodb.ApproximateCreationDateTime = Math.floor(created.getTime() / 1000);
  return { ...json, eventSourceARN: streamArn };
}

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

interface ShardState {
  parent: string | undefined;
  iterator: string | undefined;
  position: ShardPosition;
  failures: number;
}

class StreamPoller {
  private readonly client: DynamoDBStreamsClient;
  private readonly shards = new Map<string, ShardState>();
  private saved: StreamPosition = {};
  private lastDescribe = 0;

  constructor(
    private readonly streamArn: string,
    endpoint: string,
    private readonly signal: AbortSignal,
  ) {
    const local = !new URL(endpoint).hostname.endsWith('.amazonaws.com');
    this.client = new DynamoDBStreamsClient({
      region: config().region,
      ...(local ? { endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    });
  }

  async run(): Promise<void> {
    this.saved = await loadStreamPosition(this.streamArn);
    while (!this.signal.aborted) {
      let busy = false;
      try {
        if (Date.now() - this.lastDescribe > DESCRIBE_EVERY_MS) await this.describe();
        for (const [id, shard] of this.shards) {
          if (this.signal.aborted) break;
          if (shard.position.done) continue;
          const parent = shard.parent ? this.shards.get(shard.parent) : undefined;
          if (parent && !parent.position.done) continue; // a parent's records come first
          busy = (await this.poll(id, shard)) || busy;
        }
      } catch (err) {
        if (this.signal.aborted) break;
        logJson('error', 'local stream poller failed; retrying', errorFields(err));
        await sleep(1000, this.signal);
      }
      if (!busy) await sleep(STREAM_IDLE_MS, this.signal);
    }
    this.client.destroy();
  }

  private async describe(): Promise<void> {
    const seen = new Set<string>();
    let start: string | undefined;
    do {
      const out = await this.client.send(new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: start }));
      for (const s of out.StreamDescription?.Shards ?? []) {
        if (!s.ShardId) continue;
        seen.add(s.ShardId);
        if (!this.shards.has(s.ShardId)) {
          this.shards.set(s.ShardId, { parent: s.ParentShardId, iterator: undefined, position: { ...this.saved[s.ShardId] }, failures: 0 });
        }
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
    // Shards past the stream's 24 h retention are gone for good.
    for (const id of this.shards.keys()) if (!seen.has(id)) this.shards.delete(id);
    this.lastDescribe = Date.now();
  }

  private async iterator(shardId: string, type: ShardIteratorType, sequenceNumber?: string): Promise<string | undefined> {
    const out = await this.client.send(
      new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: type, SequenceNumber: sequenceNumber }),
    );
    return out.ShardIterator;
  }

  private async resume(shardId: string, position: ShardPosition): Promise<string | undefined> {
    if (!position.sequenceNumber) return this.iterator(shardId, 'TRIM_HORIZON');
    try {
      return await this.iterator(shardId, 'AFTER_SEQUENCE_NUMBER', position.sequenceNumber);
    } catch (err) {
      // The saved record was trimmed away: everything still in the shard is newer than it.
      if ((err as Error).name !== 'TrimmedDataAccessException') throw err;
      return this.iterator(shardId, 'TRIM_HORIZON');
    }
  }

  private async save(): Promise<void> {
    const shards: StreamPosition = {};
    for (const [id, s] of this.shards) shards[id] = s.position;
    await saveStreamPosition(this.streamArn, shards);
  }

  /** One GetRecords on one shard; true when it returned records. */
  private async poll(shardId: string, shard: ShardState): Promise<boolean> {
    shard.iterator ??= await this.resume(shardId, shard.position);
    if (!shard.iterator) return false;
    let out;
    try {
      out = await this.client.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: 100 }));
    } catch (err) {
      if ((err as Error).name === 'ExpiredIteratorException' || (err as Error).name === 'TrimmedDataAccessException') {
        shard.iterator = undefined;
        return false;
      }
      throw err;
    }
    const records = out.Records ?? [];
    const batch = records.map((r) => toLambdaRecord(r, this.streamArn)).filter(isOutboxInsert);
    if (batch.length > 0) {
      let failed: string | undefined;
      try {
        failed = (await fanOutHandler({ Records: batch })).batchItemFailures[0]?.itemIdentifier;
      } catch (err) {
        logJson('error', 'stream handler threw; retrying the batch', errorFields(err));
        failed = batch[0]?.dynamodb?.SequenceNumber;
      }
      if (failed !== undefined) {
        shard.failures += 1;
        if (shard.failures <= STREAM_RETRY_ATTEMPTS) {
          await sleep(250 * 2 ** shard.failures, this.signal);
          shard.iterator = await this.iterator(shardId, 'AT_SEQUENCE_NUMBER', failed);
          return true;
        }
        // A poison record: park it in the log (the on-failure destination of the AWS mapping) and move on.
        logJson('error', 'stream record failed every retry; skipping it', { shard_id: shardId, sequence_number: failed });
        shard.failures = 0;
        shard.position.sequenceNumber = failed;
        await this.save();
        shard.iterator = await this.iterator(shardId, 'AFTER_SEQUENCE_NUMBER', failed);
        return true;
      }
      shard.failures = 0;
    }
    const last = records.at(-1)?.dynamodb?.SequenceNumber;
    if (last) shard.position.sequenceNumber = last;
    shard.iterator = out.NextShardIterator;
    if (!shard.iterator) {
      shard.position.done = true;
      this.lastDescribe = 0; // a closed shard means a child to pick up
    }
    // Saved only when the handler ran or a shard closed: the save is a table write, and so a
    // stream record itself; saving after every record would feed the poller its own writes.
    if (batch.length > 0 || shard.position.done) await this.save();
    return records.length > 0;
  }
}

async function pollQueue(queueArn: string, signal: AbortSignal): Promise<void> {
  const region = config().region;
  while (!signal.aborted) {
    let messages: Message[];
    try {
      const out = await sqs().send(
        new ReceiveMessageCommand({
          QueueUrl: webhookQueueUrl(),
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
        { abortSignal: signal },
      );
      messages = out.Messages ?? [];
    } catch (err) {
      if (signal.aborted) break;
      logJson('error', 'local queue poller failed; retrying', errorFields(err));
      await sleep(1000, signal);
      continue;
    }
    if (messages.length === 0) continue;
    const event: SQSEvent = { Records: messages.map((m) => toSqsRecord(m, queueArn, region)) };
    let failed: Set<string>;
    try {
      failed = new Set((await signerHandler(event)).batchItemFailures.map((f) => f.itemIdentifier));
    } catch (err) {
      logJson('error', 'signer threw; the whole batch stays queued', errorFields(err));
      continue;
    }
    const finished = messages.filter((m) => m.MessageId && !failed.has(m.MessageId));
    if (finished.length === 0) continue;
    try {
      await sqs().send(
        new DeleteMessageBatchCommand({
          QueueUrl: webhookQueueUrl(),
          Entries: finished.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
        }),
      );
    } catch (err) {
      // Not deleted means received again later; the delivery log makes that a no-op.
      logJson('error', 'could not delete finished webhook messages', errorFields(err));
    }
  }
}

/** fauxqs keeps messages in memory: queue again whatever was pending when the stack stopped. */
async function requeuePending(): Promise<number> {
  const pending = await scanPendingDeliveries();
  for (const d of pending) {
    await sendDeliveryMessage({ event_id: d.event_id, key_id: d.key_id, round: d.round });
    await markQueued(d.key_id, d.event_id, d.round);
  }
  return pending.length;
}

export async function startWebhookPipeline(options: WebhookPipelineOptions): Promise<WebhookPipeline> {
  const server = await startFauxqs({ port: 0, host: '127.0.0.1', logger: false });
  const dlq = server.createQueue('webhooks-dlq', { attributes: { MessageRetentionPeriod: '1209600' } });
  const queue = server.createQueue('webhooks', {
    attributes: {
      VisibilityTimeout: String(QUEUE_VISIBILITY_SECONDS),
      MessageRetentionPeriod: '1209600',
      RedrivePolicy: JSON.stringify({
        deadLetterTargetArn: dlq.queueArn,
        maxReceiveCount: String(maxReceiveCount(config().webhookRetrySchedule)),
      }),
    },
  });
  // The fan-out Lambda finds its queue through the environment, as in AWS.
  process.env.WEBHOOK_QUEUE_URL = queue.queueUrl;
  resetConfig();
  resetSqsClient();

  const aborter = new AbortController();
  const stopServer = () => server.stop();
  let requeued = 0;
  try {
    if (options.requeuePending !== false) requeued = await requeuePending();
  } catch (err) {
    await stopServer();
    throw err;
  }
  const loops = [
    ...(options.streamArn ? [new StreamPoller(options.streamArn, options.endpoint, aborter.signal).run()] : []),
    ...Array.from({ length: SQS_POLLERS }, () => pollQueue(queue.queueArn, aborter.signal)),
  ].map((p) =>
    p.catch((err: unknown) => {
      logJson('error', 'webhook pipeline loop stopped', errorFields(err));
    }),
  );
  options.log?.(
    `webhooks: table stream → fan-out → queue (fauxqs on 127.0.0.1:${server.port}) → signer${requeued ? `; ${requeued} pending deliveries queued again` : ''}`,
  );

  return {
    queueUrl: queue.queueUrl,
    deadLetterQueueUrl: dlq.queueUrl,
    stop: async () => {
      aborter.abort();
      await Promise.all(loops);
      resetSqsClient();
      await stopServer();
      delete process.env.WEBHOOK_QUEUE_URL;
      resetConfig();
    },
  };
}
