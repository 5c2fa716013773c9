/**
 * The local stack's webhook path: the same two Lambdas the CDK stack deploys, fed the way their
 * event-source mappings feed them in AWS.
 *
 *   DynamoDB Local stream ──(outbox INSERT filter)──▶ functions/events ──▶ fauxqs queue
 *   order writes ──▶ fauxqs express queue ──▶ functions/events (numbered at once) ──▶ fauxqs queue
 *   fauxqs queues (fast lane, slow lane) ──(ReceiveMessage, batch ≤ 10)──▶ functions/webhooks ──▶ receivers
 *                 └──(maxReceiveCount)──▶ dead-letter queue ──▶ functions/webhooks/dead-letter ──▶ delivery log
 *
 * The stream side is stream-poller.ts, the queue side queue-poller.ts; this module wires them:
 * fauxqs (a real SQS-protocol server, in this process) with the redrive policy the CDK queue
 * has, and a few concurrent queue pollers. fauxqs keeps messages in memory only, so a start
 * queues every pending delivery again (the signer's due check keeps their schedule).
 */
import { newContext } from '#shared/context.ts';
import { startLocalQueueServer } from './local-queue.ts';
import { config, resetConfig } from '#shared/config.ts';
import { markQueued } from '#db/webhook/delivery.repo.ts';
import { scanParkedEndpoints, scanPendingDeliveries } from './pending-deliveries.ts';
import { maxReceiveCount } from '#domain/webhook/retry.ts';
import { resetSqsClient, sendDeliveryMessage } from '#queue/sqs.ts';
import { errorFields, log as logJson } from '#shared/log.ts';
import { handler as fanOutHandler } from '#functions/events/handler.ts';
import { handler as signerHandler } from '#functions/webhooks/handler.ts';
import { handler as deadLetterHandler } from '#functions/webhooks/dead-letter.ts';
import { StreamPoller } from './stream-poller.ts';
import { OUTBOX_BATCH_SIZE } from '#db/event/outbox-stream-filter.ts';
import { EXPRESS_BATCH_SIZE, EXPRESS_RETENTION_SECONDS } from '#domain/event/express.ts';
import { pollQueue } from './queue-poller.ts';
import { startIntegratorAws, type IntegratorAws } from './integrator-aws.ts';
import { clearRoleCredentials } from '#functions/webhooks/destinations/credentials.ts';
import { clearDestinationClients } from '#functions/webhooks/destinations/clients.ts';

export interface WebhookPipelineOptions {
  /** Without one, only the queue side runs (tests that drive the fan-out Lambda themselves). */
  streamArn: string | undefined;
  /** The DynamoDB endpoint; DynamoDB Local serves its Streams API on the same port. */
  endpoint: string;
  log?: (line: string) => void;
  /** Queue again the deliveries left pending by a previous run (default true). */
  requeuePending?: boolean;
  /** The redrive limit; by default the one the CDK queue has (retry.ts). Tests lower it. */
  maxReceiveCount?: number;
}

export interface WebhookPipeline {
  queueUrl: string;
  slowQueueUrl: string;
  deadLetterQueueUrl: string;
  /** The SQS emulator's endpoint: an SQS destination's queue lives there too. */
  sqsEndpoint: string;
  /** The integrator's account for SQS and EventBridge destinations (STS, EventBridge; integrator-aws.ts). */
  integrator: IntegratorAws;
  stop(): Promise<void>;
}

/**
 * Well above the signer's run time (10 s POST timeout). The CDK queue has 180 s (6 × the signer's
 * Lambda timeout, AWS's advice for event-source mappings); nothing here has a Lambda timeout.
 */
const QUEUE_VISIBILITY_SECONDS = 60;
/**
 * Receive loops and messages each may have under way. Messages are handled one by one, so a
 * receiver that hangs holds one of the 4 × 50 slots for ≤ 10 s, never a batch (docs/webhooks.md,
 * "Isolation"); parking stops it taking slots at all once its failures are sustained.
 */
const SQS_POLLERS = 4;
const MESSAGES_PER_POLLER = 50;
/**
 * The slow lane (endpoints whose circuit is open, docs/webhooks.md "Lanes"): one poller with a
 * few slots, as its CDK mapping has a few executions, so a crowd of failing endpoints shows here
 * as a backlog of the slow lane, never as fewer slots for the fast one.
 */
const SLOW_LANE_MESSAGES = 10;

/** fauxqs keeps messages in memory: queue again whatever was pending when the stack stopped. */
async function requeuePending(): Promise<number> {
  const pending = await scanPendingDeliveries();
  for (const d of pending) {
    await sendDeliveryMessage({ event_id: d.event_id, key_id: d.key_id, round: d.round });
    await markQueued(newContext(), d.key_id, d.event_id, d.round);
  }
  // Probe messages were in memory too; each parked endpoint gets its probe at its due time again.
  for (const e of await scanParkedEndpoints()) {
    await sendDeliveryMessage(
      { kind: 'probe', key_id: e.key_id, due_at: e.next_probe_at ?? new Date().toISOString() },
      0,
      'slow',
    );
  }
  return pending.length;
}

export async function startWebhookPipeline(options: WebhookPipelineOptions): Promise<WebhookPipeline> {
  const server = await startLocalQueueServer();
  const dlq = await server.createQueue('webhooks-dlq', { MessageRetentionPeriod: '1209600' });
  // Both lanes' queues alike: visibility, retention and the redrive to the one dead-letter queue.
  const laneAttributes = {
    VisibilityTimeout: String(QUEUE_VISIBILITY_SECONDS),
    MessageRetentionPeriod: '1209600',
    RedrivePolicy: JSON.stringify({
      deadLetterTargetArn: dlq.queueArn,
      maxReceiveCount: String(
        options.maxReceiveCount ??
          maxReceiveCount(config().webhookRetrySchedule, config().webhookQueueWaitLimitSeconds),
      ),
    }),
  };
  const queue = await server.createQueue('webhooks', laneAttributes);
  // As the CDK queue: a message that keeps failing just expires, since the stream delivers its event.
  const expressQueue = await server.createQueue('events-express', {
    VisibilityTimeout: String(QUEUE_VISIBILITY_SECONDS),
    MessageRetentionPeriod: String(EXPRESS_RETENTION_SECONDS),
  });
  const slowQueue = await server.createQueue('webhooks-slow', laneAttributes);
  // The fan-out Lambda finds its queue through the environment, as in AWS; the SDK finds the
  // emulator through its own endpoint variable, with the dummy credentials fauxqs accepts.
  process.env.WEBHOOK_QUEUE_URL = queue.queueUrl;
  process.env.WEBHOOK_SLOW_QUEUE_URL = slowQueue.queueUrl;
  process.env.EXPRESS_QUEUE_URL = expressQueue.queueUrl;
  process.env.AWS_ENDPOINT_URL_SQS = `http://127.0.0.1:${server.port}`;
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
  // SQS and EventBridge destinations: the role is assumed from, and events put on, the integrator's
  // stand-in; the SDK finds it through its own endpoint variables, as it finds fauxqs.
  const integrator = await startIntegratorAws(config().region);
  process.env.AWS_ENDPOINT_URL_STS = integrator.endpoint;
  process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = integrator.endpoint;
  resetConfig();
  resetSqsClient();
  clearRoleCredentials();
  clearDestinationClients();

  const aborter = new AbortController();
  const stopServer = async () => {
    await integrator.stop();
    await server.stop();
  };
  let requeued = 0;
  try {
    if (options.requeuePending !== false) requeued = await requeuePending();
  } catch (err) {
    await stopServer();
    throw err;
  }
  const loops = [
    ...(options.streamArn
      ? [
          new StreamPoller(options.streamArn, options.endpoint, fanOutHandler, aborter.signal, {
            batchSize: OUTBOX_BATCH_SIZE,
          }).run(),
        ]
      : []),
    ...Array.from({ length: SQS_POLLERS }, () =>
      pollQueue({ url: queue.queueUrl, arn: queue.queueArn }, signerHandler, aborter.signal, {
        concurrent: MESSAGES_PER_POLLER,
      }),
    ),
    // Messages one by one, as many at once as the CDK mapping's batch holds: an order event never waits for another's.
    pollQueue({ url: expressQueue.queueUrl, arn: expressQueue.queueArn }, fanOutHandler, aborter.signal, {
      concurrent: EXPRESS_BATCH_SIZE,
    }),
    pollQueue({ url: slowQueue.queueUrl, arn: slowQueue.queueArn }, signerHandler, aborter.signal, {
      concurrent: SLOW_LANE_MESSAGES,
    }),
    pollQueue({ url: dlq.queueUrl, arn: dlq.queueArn }, deadLetterHandler, aborter.signal),
  ].map((p) =>
    p.catch((err: unknown) => {
      logJson('error', 'webhook pipeline loop stopped', errorFields(err));
    }),
  );
  options.log?.(
    `webhooks: table stream → fan-out → queue (fauxqs, listening on 127.0.0.1:${server.port} only) → signer, dead letters → delivery log${requeued ? `; ${requeued} pending deliveries queued again` : ''}`,
  );
  options.log?.(
    `destinations: SQS queues on fauxqs (AWS_ENDPOINT_URL_SQS=http://127.0.0.1:${server.port}), STS and EventBridge stand-in on ${integrator.endpoint} (docs/destinations.md, "Locally")`,
  );

  return {
    queueUrl: queue.queueUrl,
    slowQueueUrl: slowQueue.queueUrl,
    deadLetterQueueUrl: dlq.queueUrl,
    sqsEndpoint: `http://127.0.0.1:${server.port}`,
    integrator,
    stop: async () => {
      aborter.abort();
      await Promise.all(loops);
      resetSqsClient();
      clearRoleCredentials();
      clearDestinationClients();
      await stopServer();
      delete process.env.WEBHOOK_QUEUE_URL;
      delete process.env.WEBHOOK_SLOW_QUEUE_URL;
      delete process.env.EXPRESS_QUEUE_URL;
      delete process.env.AWS_ENDPOINT_URL_SQS;
      delete process.env.AWS_ENDPOINT_URL_STS;
      delete process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
      resetConfig();
    },
  };
}
