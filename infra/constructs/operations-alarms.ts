import { Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { TABLE } from '#db/core/table.ts';
import { METRICS_NAMESPACE, WEBHOOK_METRICS } from '../metric-names.ts';
import type { WebhookQueues } from './webhook-queues.ts';

export interface OperationsAlarmsProps {
  api: apigw.RestApi;
  table: dynamodb.ITable;
  queues: WebhookQueues;
  /** The authorizer first: its errors and throttles fail every request. */
  functions: { name: string; fn: lambda.IFunction }[];
  /** The stream fan-out, for iterator age. */
  eventsFunction: lambda.IFunction;
}

const FIVE_MINUTES = Duration.minutes(5);

/** Half the ~120,000 in-flight messages at which a standard queue stops handing out messages. */
export const IN_FLIGHT_THRESHOLD = 60_000;

/**
 * Platform alarms (the API, the functions, the table, the webhook pipeline) and one tenant alarm
 * (receivers that stay down), kept apart by name and description. None fires on missing data,
 * and none stays red for days: dead letters are alarmed as a rate, not as a queue depth.
 */
export class OperationsAlarms extends Construct {
  constructor(scope: Construct, id: string, props: OperationsAlarmsProps) {
    super(scope, id);
    const alarm = (
      name: string,
      description: string,
      metric: cloudwatch.IMetric,
      threshold: number,
      evaluationPeriods = 1,
      datapointsToAlarm?: number,
    ) =>
      new cloudwatch.Alarm(this, name, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods,
        datapointsToAlarm,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });

    // ---- API ----
    const requests = props.api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const errors = props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });
    alarm(
      'Api5xxRate',
      'Platform: more than 2% of API requests answered 5xx (two of three 5-minute periods, at least 20 requests)',
      new cloudwatch.MathExpression({
        expression: 'IF(requests >= 20, errors / requests, 0)',
        usingMetrics: { requests, errors },
        period: FIVE_MINUTES,
        label: '5xx rate',
      }),
      0.02,
      3,
      2,
    );
    alarm(
      'ApiLatencyP99',
      'Platform: API p99 latency at or above 2.5 s for 15 minutes',
      props.api.metricLatency({ period: FIVE_MINUTES, statistic: 'p99' }),
      2500,
      3,
    );

    // ---- Lambda: errors and throttles, authorizer first ----
    for (const { name, fn } of props.functions) {
      alarm(
        `${name}Errors`,
        `Platform: ${name} function errors (5 or more in 5 minutes)`,
        fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }),
        5,
      );
      alarm(
        `${name}Throttles`,
        `Platform: ${name} function throttled (reserved or account concurrency spent)`,
        fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        1,
      );
    }

    // ---- DynamoDB throttles, table and gsi1 ----
    const throttle = (metricName: string, index?: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/DynamoDB',
        metricName,
        dimensionsMap: index
          ? { TableName: props.table.tableName, GlobalSecondaryIndexName: index }
          : { TableName: props.table.tableName },
        period: FIVE_MINUTES,
        statistic: 'Sum',
      });
    alarm(
      'TableThrottles',
      'Platform: DynamoDB throttled 10 or more reads/writes in 5 minutes (hot partition or on-demand ramp-up)',
      new cloudwatch.MathExpression({
        expression: 'r + w + ir + iw',
        usingMetrics: {
          r: throttle('ReadThrottleEvents'),
          w: throttle('WriteThrottleEvents'),
          ir: throttle('ReadThrottleEvents', TABLE.gsi1.indexName),
          iw: throttle('WriteThrottleEvents', TABLE.gsi1.indexName),
        },
        period: FIVE_MINUTES,
        label: 'throttle events',
      }),
      10,
    );

    // ---- Webhook pipeline ----
    const { queue, deadLetterQueue, streamFailureQueue } = props.queues;
    alarm(
      'WebhookQueueAge',
      'Platform: a webhook message has waited an hour or more (the signer is not keeping up, or failing)',
      queue.metricApproximateAgeOfOldestMessage({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      3600,
      2,
    );
    alarm(
      'WebhookInFlight',
      `Platform: ${IN_FLIGHT_THRESHOLD} webhook messages in flight (SQS stops handing out messages near 120,000)`,
      queue.metricApproximateNumberOfMessagesNotVisible({ period: FIVE_MINUTES, statistic: 'Maximum' }),
      IN_FLIGHT_THRESHOLD,
    );
    // NumberOfMessagesSent does not count messages SQS moves to a DLQ by redrive; the
    // dead-letter consumer receives every one, so received-in-5-minutes is the arrival rate.
    alarm(
      'WebhookNewDeadLetters',
      'Platform: webhook deliveries were dead-lettered in the last 5 minutes (the signer gave up on them early; see `webhooks deliveries`)',
      deadLetterQueue.metricNumberOfMessagesReceived({ period: FIVE_MINUTES, statistic: 'Sum' }),
      1,
    );
    alarm(
      'StreamFailures',
      'Platform: outbox stream records the fan-out could not handle in the last 5 minutes (replay with `webhooks replay`)',
      streamFailureQueue.metricNumberOfMessagesSent({ period: FIVE_MINUTES, statistic: 'Sum' }),
      1,
    );
    alarm(
      'StreamIteratorAge',
      'Platform: the fan-out is 5 minutes or more behind the table stream (records expire after 24 h)',
      props.eventsFunction.metric('IteratorAge', { period: Duration.minutes(1), statistic: 'Maximum' }),
      Duration.minutes(5).toMilliseconds(),
      5,
    );

    // ---- Tenant: receivers that stay down ----
    alarm(
      'TenantWebhookFailures',
      'Tenant: 25 or more webhook deliveries failed in an hour after the whole retry schedule (receivers down; not a platform fault unless many stores at once)',
      new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: WEBHOOK_METRICS.deliveries,
        dimensionsMap: { service: WEBHOOK_METRICS.service, outcome: WEBHOOK_METRICS.failedOutcome },
        period: Duration.hours(1),
        statistic: 'Sum',
      }),
      25,
    );
  }
}
