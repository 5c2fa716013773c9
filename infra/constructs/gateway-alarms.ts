import { Duration } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { GATEWAY_METRICS, METRICS_NAMESPACE } from '../metric-names.ts';

export interface GatewayAlarmsProps {
  api: apigw.RestApi;
  /** The stage's JSON access log (ACCESS_LOG_FIELDS): its `error` field names the gateway response type. */
  accessLogs: logs.ILogGroup;
}

const FIVE_MINUTES = Duration.minutes(5);

/** A 4xx share this high is not one integration's typos: a tenant flood, a broken client release, or a probe. */
const CLIENT_ERROR_RATE = 0.25;

/**
 * The gateway's side of tenant protection: the share of requests answered 4xx, and the stage
 * throttle, which every tenant shares, refusing anything at all. API Gateway publishes no
 * THROTTLED metric, so a metric filter counts access-log lines whose error is THROTTLED.
 */
export class GatewayAlarms extends Construct {
  constructor(scope: Construct, id: string, props: GatewayAlarmsProps) {
    super(scope, id);
    new logs.MetricFilter(this, 'StageThrottledFilter', {
      logGroup: props.accessLogs,
      filterPattern: logs.FilterPattern.stringValue('$.error', '=', 'THROTTLED'),
      metricNamespace: METRICS_NAMESPACE,
      metricName: GATEWAY_METRICS.stageThrottled,
      metricValue: '1',
      defaultValue: 0,
    });
    const requests = props.api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum' });
    const clientErrors = props.api.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum' });
    new cloudwatch.Alarm(this, 'TenantApi4xxRate', {
      alarmDescription: `Tenant: ${CLIENT_ERROR_RATE * 100}% or more of API requests answered 4xx for 15 minutes (at least 100 requests a period); the access log's key_id says whose`,
      metric: new cloudwatch.MathExpression({
        expression: 'IF(requests >= 100, errors / requests, 0)',
        usingMetrics: { requests, errors: clientErrors },
        period: FIVE_MINUTES,
        label: '4xx rate',
      }),
      threshold: CLIENT_ERROR_RATE,
      evaluationPeriods: 3,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    new cloudwatch.Alarm(this, 'StageThrottled', {
      alarmDescription:
        'Platform: the stage throttle every tenant shares refused requests (429 THROTTLED); raise plannedKeys or find the flood (docs/deploy.md, Capacity)',
      metric: new cloudwatch.Metric({
        namespace: METRICS_NAMESPACE,
        metricName: GATEWAY_METRICS.stageThrottled,
        period: FIVE_MINUTES,
        statistic: 'Sum',
      }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
