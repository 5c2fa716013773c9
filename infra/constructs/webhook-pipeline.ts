import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '../../shared/config.ts';
import { maxReceiveCount } from '../../shared/domain/webhook/retry.ts';
import { OUTBOX_STREAM_FILTER } from '../../shared/db/outbox-stream-filter.ts';
import { ServiceFunction } from './service-function.ts';

export interface WebhookPipelineProps {
  /** The single table; it must have its stream (NEW_IMAGE). */
  table: dynamodb.ITable;
  /** Extra function settings for both Lambdas (environment is merged). */
  keyFunctionDefaults?: Partial<NodejsFunctionProps>;
  /** Seconds between attempts (WEBHOOK_RETRY_SCHEDULE); the queue's receive limit is derived from it. */
  retrySchedule?: number[];
}

const SIGNER_TIMEOUT = Duration.seconds(30);

/**
 * The webhook path (CONTRACT §10): table stream → fan-out Lambda → queue → signer Lambda →
 * receivers, with a dead-letter queue for deliveries given up on and one for stream records the
 * fan-out could not handle.
 *
 * - Stream mapping: only outbox INSERTs reach the fan-out (the filter shared with the local
 *   poller); a failing record is isolated by bisection, retried, then parked in the on-failure
 *   queue (its outbox item stays in the table for 7 days, so it can be replayed).
 * - Queue: the signer schedules retries itself with per-message visibility changes (up to 12 h
 *   each, chained for longer waits); maxReceiveCount follows from the schedule, so the message
 *   reaches the DLQ just after the last attempt. Visibility timeout 6 × the signer's timeout, as
 *   AWS advises for SQS event sources. 14-day retention outlasts the whole schedule.
 * - Grants are per action: the fan-out queries keys and writes delivery records, the signer reads
 *   the key and the delivery and updates the delivery.
 */
export class WebhookPipeline extends Construct {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly streamFailureQueue: sqs.Queue;
  readonly eventsFunction: ServiceFunction;
  readonly webhooksFunction: ServiceFunction;
  readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: WebhookPipelineProps) {
    super(scope, id);
    const schedule = props.retrySchedule ?? DEFAULT_WEBHOOK_RETRY_SCHEDULE;
    const defaults = props.keyFunctionDefaults ?? {};

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      retentionPeriod: Duration.days(14),
      enforceSSL: true,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(SIGNER_TIMEOUT.toSeconds() * 6),
      retentionPeriod: Duration.days(14),
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: maxReceiveCount(schedule) },
    });
    this.streamFailureQueue = new sqs.Queue(this, 'StreamFailureQueue', {
      retentionPeriod: Duration.days(14),
      enforceSSL: true,
    });

    const environment = {
      ...defaults.environment,
      TABLE_NAME: props.table.tableName,
      WEBHOOK_QUEUE_URL: this.queue.queueUrl,
      WEBHOOK_RETRY_SCHEDULE: schedule.join(','),
    };

    this.eventsFunction = new ServiceFunction(this, 'EventsFunction', {
      ...defaults,
      entryPath: 'functions/events/handler.ts',
      description: 'Table stream → one webhook queue message per receiving key',
      timeout: Duration.seconds(60),
      environment,
    });
    props.table.grant(this.eventsFunction, 'dynamodb:Query', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem');
    this.queue.grantSendMessages(this.eventsFunction);
    this.eventsFunction.addEventSource(
      new DynamoEventSource(props.table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 25,
        filters: [lambda.FilterCriteria.filter(OUTBOX_STREAM_FILTER)],
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.streamFailureQueue),
        // One poller per shard keeps a store's events in order.
        parallelizationFactor: 1,
      }),
    );

    this.webhooksFunction = new ServiceFunction(this, 'WebhooksFunction', {
      ...defaults,
      entryPath: 'functions/webhooks/handler.ts',
      description: 'Signs and POSTs webhooks; retries via visibility changes',
      timeout: SIGNER_TIMEOUT,
      environment,
    });
    props.table.grant(this.webhooksFunction, 'dynamodb:GetItem', 'dynamodb:UpdateItem');
    this.webhooksFunction.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        // Caps how hard a backlog (a receiver back after an outage) hits receivers.
        maxConcurrency: 10,
      }),
    );

    this.alarms = [
      new cloudwatch.Alarm(this, 'DeadLetterQueueAlarm', {
        alarmDescription: 'Webhook deliveries given up on (see `webhooks deliveries`; `webhooks redeliver` retries one)',
        metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(this, 'StreamFailureQueueAlarm', {
        alarmDescription: 'Outbox stream records the fan-out could not handle (their events were not queued)',
        metric: this.streamFailureQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
      new cloudwatch.Alarm(this, 'StreamIteratorAgeAlarm', {
        alarmDescription: 'The fan-out is falling behind the table stream (webhooks are late; records expire after 24 h)',
        metric: this.eventsFunction.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' }),
        threshold: Duration.minutes(5).toMilliseconds(),
        evaluationPeriods: 5,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      }),
    ];
  }
}
