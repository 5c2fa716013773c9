import { Aws, Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Construct } from 'constructs';
import {
  DEFAULT_WEBHOOK_CIRCUIT_AFTER_FAILURES,
  DEFAULT_WEBHOOK_RETRY_SCHEDULE,
  DEFAULT_WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT,
} from '#shared/config.ts';
import { OUTBOX_BATCH_SIZE, OUTBOX_STREAM_FILTER } from '#db/event/outbox-stream-filter.ts';
import {
  EVENTS_TIMEOUT,
  EXPRESS_MAX_CONCURRENCY,
  laneConcurrency,
  SIGNER_TIMEOUT,
  SLOW_LANE_AGE_ALARM,
} from '../webhook-settings.ts';
import { EXPRESS_BATCH_SIZE } from '#domain/event/express.ts';
import { acknowledgeDestinationRoles, acknowledgeQueueEventSource } from '../nag-acknowledgements.ts';
import { assumableRoleArnPattern, EXTERNAL_ID_PREFIX } from '#domain/key/destination.ts';
import { METRICS_NAMESPACE, WEBHOOK_METRICS } from '../metric-names.ts';
import { ServiceFunction } from './service-function.ts';
import type { WebhookQueues } from './webhook-queues.ts';

export interface WebhookPipelineProps {
  /** The single table; it must have its stream (NEW_IMAGE). */
  table: dynamodb.ITable;
  /** The queues of the stateful stack. */
  queues: WebhookQueues;
  /** The key webhook secrets are encrypted under; only the signer may decrypt. */
  secretsKey: kms.IKey;
  /** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE); must match the one the queues were built for. */
  retrySchedule?: readonly number[];
  /** Reserved concurrency of the signer, split between its two lanes' event sources (laneConcurrency); 0: none reserved. */
  signerConcurrency?: number;
  /** Receives operational events (`webhook.endpoint_parked`): the stack's alarm topic. */
  operationsTopic?: sns.ITopic;
  environment?: Record<string, string>;
}

/**
 * SQS and EventBridge destinations (docs/destinations.md): the signer acts in an integrator's account
 * only by assuming their role, and may assume only roles named `store-events-*`, in any account but
 * this one (an integrator's account is not known at deploy time; the stack's own roles are never
 * destinations), and only with an external id of ours (`sie_…`, one per key). The role's trust
 * policy, which names this role and the key's external id, is what admits it. It needs no SQS or
 * EventBridge permission of its own: the send is the assumed role's.
 */
export function destinationRoleStatement(): iam.PolicyStatement {
  return new iam.PolicyStatement({
    sid: 'AssumeIntegratorDestinationRoles',
    actions: ['sts:AssumeRole'],
    resources: [assumableRoleArnPattern(Aws.PARTITION)],
    conditions: {
      StringLike: { 'sts:ExternalId': `${EXTERNAL_ID_PREFIX}*` },
      StringNotEquals: { 'aws:ResourceAccount': Aws.ACCOUNT_ID },
    },
  });
}

/** Reserved concurrency of the signer when none is given. */
const DEFAULT_SIGNER_CONCURRENCY = 10;

/**
 * The webhook path (docs/contract.md#webhooks): table stream → fan-out Lambda → queue → signer Lambda →
 * receivers, and dead-letter queue → consumer that marks the delivery `failed`.
 *
 * - Stream mapping: only outbox INSERTs reach the fan-out (the filter shared with the local
 *   poller); a failing record is isolated by bisection, retried, then parked in the on-failure
 *   queue (its outbox item stays in the table for 30 days, so it can be replayed).
 * - Express mapping: order writes name their event on the express queue, and the same function
 *   numbers and fans it out at once (docs/webhooks.md, "Order events first").
 * - Signer: waits up to 15 min stay on the queue (visibility), longer ones re-send the message
 *   with DelaySeconds, so a delivery waiting hours is not in flight; hence SendMessage on its own
 *   queues. Reserved concurrency keeps other functions from starving it and caps how hard a
 *   backlog (a receiver back after an outage) hits receivers.
 * - Two lanes, one function: the fast queue and the slow queue (endpoints whose circuit is open)
 *   each have their own mapping and maximum concurrency, which together are the reservation, so
 *   endpoints that time out can pin the slow lane's executions only (docs/webhooks.md, "Lanes").
 * - Grants are per action (infra/table-access.ts); kms:Decrypt is the signer's alone.
 */
export class WebhookPipeline extends Construct {
  readonly eventsFunction: ServiceFunction;
  readonly webhooksFunction: ServiceFunction;
  readonly deadLetterFunction: ServiceFunction;
  readonly endpointsParkedAlarm: cloudwatch.Alarm;
  readonly slowLaneAgeAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: WebhookPipelineProps) {
    super(scope, id);
    const { table, queues } = props;
    const schedule = props.retrySchedule ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE;
    const signerConcurrency = props.signerConcurrency ?? DEFAULT_SIGNER_CONCURRENCY;
    const lanes = laneConcurrency(signerConcurrency);
    const environment = {
      ...props.environment,
      WEBHOOK_QUEUE_URL: queues.queue.queueUrl,
      WEBHOOK_SLOW_QUEUE_URL: queues.slowQueue.queueUrl,
      WEBHOOK_RETRY_SCHEDULE: schedule.join(','),
    };

    this.eventsFunction = new ServiceFunction(this, 'EventsFunction', {
      entryPath: 'functions/events/handler.ts',
      service: 'events',
      description: 'Table stream and express queue → one webhook queue message per receiving key',
      timeout: EVENTS_TIMEOUT,
      environment,
    }).bindTable(table, 'events');
    queues.queue.grantSendMessages(this.eventsFunction);
    this.eventsFunction.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: OUTBOX_BATCH_SIZE,
        filters: [lambda.FilterCriteria.filter(OUTBOX_STREAM_FILTER)],
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(queues.streamFailureQueue),
        // One poller per shard keeps a store's events in order.
        parallelizationFactor: 1,
      }),
    );
    // Order events first: order writes name their event here, and it is numbered at once.
    this.eventsFunction.addEventSource(
      new SqsEventSource(queues.expressQueue, {
        batchSize: EXPRESS_BATCH_SIZE,
        maxConcurrency: EXPRESS_MAX_CONCURRENCY,
        reportBatchItemFailures: true,
      }),
    );
    acknowledgeQueueEventSource(
      this.eventsFunction,
      'its express queue needs none: no message is ever reported failed, and the table stream delivers every event anyway.',
    );

    this.webhooksFunction = new ServiceFunction(this, 'WebhooksFunction', {
      entryPath: 'functions/webhooks/handler.ts',
      service: WEBHOOK_METRICS.service,
      description: 'Signs and POSTs webhooks; waits ≤ 15 min on the queue, longer ones re-sent with DelaySeconds',
      timeout: SIGNER_TIMEOUT,
      reservedConcurrentExecutions: signerConcurrency > 0 ? signerConcurrency : undefined,
      environment: {
        ...environment,
        WEBHOOK_SECRET_KMS_KEY_ID: props.secretsKey.keyArn,
        // Stated in the stack (the code has the same defaults), so a template says how its lanes behave.
        WEBHOOK_CIRCUIT_AFTER_FAILURES: String(DEFAULT_WEBHOOK_CIRCUIT_AFTER_FAILURES),
        WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT: String(DEFAULT_WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT),
        ...(props.operationsTopic ? { OPERATIONS_TOPIC_ARN: props.operationsTopic.topicArn } : {}),
      },
    }).bindTable(table, 'webhooks');
    // Each lane sends to the other (a circuit that opened or closed moves a delivery) and to itself (delays).
    queues.queue.grantSendMessages(this.webhooksFunction);
    queues.slowQueue.grantSendMessages(this.webhooksFunction);
    props.operationsTopic?.grantPublish(this.webhooksFunction);
    props.secretsKey.grantDecrypt(this.webhooksFunction);
    this.webhooksFunction.addToRolePolicy(destinationRoleStatement());
    acknowledgeDestinationRoles(this.webhooksFunction);
    for (const [queue, maxConcurrency] of [
      [queues.queue, lanes.fast],
      [queues.slowQueue, lanes.slow],
    ] as const) {
      this.webhooksFunction.addEventSource(
        new SqsEventSource(queue, {
          // A batch runs in parallel, so a slow receiver delays no message of its batch; it pins
          // the execution (≤ 10 s), which concurrency, not batch size, pays for (docs/webhooks.md, "Isolation").
          batchSize: 10,
          reportBatchItemFailures: true,
          // The two lanes' maxima add up to the reservation: neither is ever throttled by the
          // other (a throttled poll costs a receive), and the slow lane cannot grow into the fast one.
          maxConcurrency,
        }),
      );
    }
    this.slowLaneAgeAlarm = new cloudwatch.Alarm(this, 'WebhookSlowLaneAge', {
      alarmDescription: `Platform: a message of the webhook slow lane has waited ${SLOW_LANE_AGE_ALARM.toMinutes()} min or more (failing endpoints are attempted late; healthy ones are not affected; see \`webhooks endpoints\`)`,
      metric: queues.slowQueue.metricApproximateAgeOfOldestMessage({
        period: Duration.minutes(5),
        statistic: 'Maximum',
      }),
      threshold: SLOW_LANE_AGE_ALARM.toSeconds(),
      evaluationPeriods: 2,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    // The alarm topic gets it (AlarmTopic.connectAlarms); the operational event says which key.
    this.endpointsParkedAlarm = new cloudwatch.Alarm(this, 'TenantEndpointsParked', {
      alarmDescription:
        'Tenant: a webhook endpoint was parked in the last 5 minutes (its deliveries wait; see `webhooks endpoints` and the webhook.endpoint_parked event)',
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: WEBHOOK_METRICS.endpointsParked,
        dimensionsMap: { service: WEBHOOK_METRICS.service, reason: WEBHOOK_METRICS.parkedReason },
        period: Duration.minutes(5),
        statistic: 'Sum',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.deadLetterFunction = new ServiceFunction(this, 'DeadLetterFunction', {
      entryPath: 'functions/webhooks/dead-letter.ts',
      service: WEBHOOK_METRICS.service,
      description: 'Webhook dead letters → delivery marked failed',
      environment,
    }).bindTable(table, 'deadLetter');
    this.deadLetterFunction.addEventSource(
      new SqsEventSource(queues.deadLetterQueue, { batchSize: 10, reportBatchItemFailures: true, maxConcurrency: 2 }),
    );
  }
}
