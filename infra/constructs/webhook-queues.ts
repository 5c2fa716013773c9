import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  acknowledgeExpressQueue,
  acknowledgeStreamFailureQueue,
  acknowledgeWebhookDeadLetterQueue,
} from '../nag-acknowledgements.ts';
import { EXPRESS_RETENTION_SECONDS } from '#domain/event/express.ts';
import { EXPRESS_VISIBILITY, QUEUE_VISIBILITY, queueMaxReceiveCount } from '../webhook-settings.ts';

export interface WebhookQueuesProps {
  /** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE); the receive limit is derived from it. */
  retrySchedule: readonly number[];
}

/**
 * The webhook pipeline's queues, kept with the table in the stateful stack: replacing the API
 * stack must not drop deliveries waiting for their next attempt. All are retained on delete and
 * encrypted with SQS-managed keys; 14-day retention (the express queue's aside) outlasts the
 * 24 h schedule.
 *
 * - queue: fan-out → signer, the fast lane. maxReceiveCount leaves the platform-error budget above the schedule.
 * - slowQueue: the slow lane, endpoints whose circuit is open (docs/webhooks.md, "Lanes"); the same
 *   settings and the same dead-letter queue, so a delivery's budget and fate do not depend on its lane.
 * - deadLetterQueue: deliveries the signer could not finish; a consumer marks them `failed`.
 * - streamFailureQueue: the stream mapping's on-failure destination (records the fan-out could
 *   not handle; their outbox items stay 30 days in the table for `webhooks replay`).
 * - expressQueue: order writes → the fan-out, which numbers their event at once instead of behind
 *   a catalog import in the stream (docs/webhooks.md, "Order events first"). A shortcut only: its
 *   messages live an hour and have no dead-letter queue, since the stream delivers every event.
 */
export class WebhookQueues extends Construct {
  readonly queue: sqs.Queue;
  readonly slowQueue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly streamFailureQueue: sqs.Queue;
  readonly expressQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: WebhookQueuesProps) {
    super(scope, id);
    const common = {
      retentionPeriod: Duration.days(14),
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    };
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', common);
    const lane = {
      ...common,
      visibilityTimeout: QUEUE_VISIBILITY,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: queueMaxReceiveCount(props.retrySchedule) },
    };
    this.queue = new sqs.Queue(this, 'Queue', lane);
    this.slowQueue = new sqs.Queue(this, 'SlowQueue', lane);
    this.streamFailureQueue = new sqs.Queue(this, 'StreamFailureQueue', common);
    acknowledgeStreamFailureQueue(this.streamFailureQueue);
    this.expressQueue = new sqs.Queue(this, 'ExpressQueue', {
      ...common,
      retentionPeriod: Duration.seconds(EXPRESS_RETENTION_SECONDS),
      visibilityTimeout: EXPRESS_VISIBILITY,
    });
    acknowledgeExpressQueue(this.expressQueue);
    acknowledgeWebhookDeadLetterQueue(this.deadLetterQueue);
  }
}
