import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { IN_FLIGHT_THRESHOLD } from '#infra/constructs/operations-alarms.ts';
import { METRICS_NAMESPACE, WEBHOOK_METRICS } from '#infra/metric-names.ts';
import { TABLE } from '#db/core/table.ts';
import { logicalId, synthStacks } from './synth.ts';

type Alarm = {
  Properties: Record<string, unknown> & {
    AlarmDescription: string;
    Metrics?: {
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Namespace: string; Dimensions?: unknown[] }; Stat: string };
    }[];
  };
};

describe('Alarms', () => {
  const { api, stateful, template } = synthStacks({ alarmEmail: 'ops@example.com' });
  const alarms = Object.entries(template.findResources('AWS::CloudWatch::Alarm')) as [string, Alarm][];
  const alarm = (idPart: string) => {
    const found = alarms.find(([id]) => id.includes(idPart));
    expect(found, `alarm ${idPart}`).toBeDefined();
    return found![1].Properties;
  };
  const topicRef = { Ref: logicalId(api.alarmTopic.topic) };

  it('notifies the SNS topic from every alarm, on alarm and on recovery', () => {
    // 13 functions × 2, API 2, gateway 2 (4xx share, stage throttle), table 1, pipeline 6 (with the slow lane's age),
    // tenant 2 (failures, parked endpoints), undelivered alarm e-mails 1 (with alarmEmail only): docs/deploy.md's
    // idle cost counts these.
    expect(alarms.length).toBe(40);
    for (const [, a] of alarms) {
      expect(a.Properties.AlarmActions).toEqual([topicRef]);
      expect(a.Properties.OKActions).toEqual([topicRef]);
      expect(a.Properties.TreatMissingData).toBe('notBreaching');
    }
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
      TopicArn: topicRef,
    });
  });

  it('subscribes no e-mail when none is given', () => {
    const bare = synthStacks().template;
    bare.resourceCountIs('AWS::SNS::Subscription', 0);
    expect(Object.keys(bare.findResources('AWS::CloudWatch::Alarm'))).toHaveLength(39);
  }, 120_000); // a second synthesis; slow on a loaded machine

  it('keeps e-mails SNS gave up on in an encrypted dead-letter queue that only the topic may send to, and alarms on it', () => {
    const queue = api.alarmTopic.deadLetterQueue!;
    const queueArn = { 'Fn::GetAtt': [logicalId(queue), 'Arn'] };
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      RedrivePolicy: { deadLetterTargetArn: queueArn },
    });
    expect(template.toJSON().Resources[logicalId(queue)].Properties).toMatchObject({
      MessageRetentionPeriod: 14 * 24 * 3600,
      SqsManagedSseEnabled: true,
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: logicalId(queue) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            Principal: { Service: 'sns.amazonaws.com' },
            Resource: queueArn,
            Condition: { ArnEquals: { 'aws:SourceArn': topicRef } },
          }),
        ]),
      },
    });
    // SNS sends to the queue with SendMessage, so NumberOfMessagesSent counts it (a redrive would not).
    const undelivered = alarm('UndeliveredNotifications');
    expect(undelivered).toMatchObject({
      MetricName: 'NumberOfMessagesSent',
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
    });
    expect(JSON.stringify(undelivered.Dimensions)).toContain(logicalId(queue));
  });

  it('watches the API 5xx rate (not a count) and p99 latency', () => {
    const rate = alarm('Api5xxRate');
    expect(rate.Metrics!.find((m) => m.Expression)?.Expression).toBe('IF(requests >= 20, errors / requests, 0)');
    expect(
      rate
        .Metrics!.map((m) => m.MetricStat?.Metric.MetricName)
        .filter(Boolean)
        .sort(),
    ).toEqual(['5XXError', 'Count']);
    expect(rate.Threshold).toBe(0.02);
    expect(alarm('ApiLatencyP99')).toMatchObject({
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Namespace: 'AWS/ApiGateway',
    });
  });

  it('watches errors and throttles of every function, the authorizer first', () => {
    const fns = [
      api.authorizerFunction,
      ...Object.values(api.functions),
      api.adminFunction,
      api.webhooks.eventsFunction,
      api.webhooks.webhooksFunction,
      api.webhooks.deadLetterFunction,
      api.nameIndexer.function,
      api.openApiFunction,
    ];
    for (const fn of fns) {
      for (const metric of ['Errors', 'Throttles']) {
        template.hasResourceProperties('AWS::CloudWatch::Alarm', {
          MetricName: metric,
          Namespace: 'AWS/Lambda',
          Dimensions: [{ Name: 'FunctionName', Value: { Ref: logicalId(fn) } }],
        });
      }
    }
    const lambdaAlarms = alarms.filter(
      ([, a]) => a.Properties.Namespace === 'AWS/Lambda' && a.Properties.MetricName !== 'IteratorAge',
    );
    expect(lambdaAlarms[0]![1].Properties.Dimensions).toEqual([
      { Name: 'FunctionName', Value: { Ref: logicalId(api.authorizerFunction) } },
    ]);
    expect(alarm('AuthorizerThrottles').Threshold).toBe(1);
  });

  it('watches DynamoDB throttles on the table and on gsi1', () => {
    const metrics = alarm('TableThrottles')
      .Metrics!.filter((m) => m.MetricStat)
      .map((m) => m.MetricStat!.Metric);
    expect(metrics.map((m) => m.MetricName).sort()).toEqual([
      'ReadThrottleEvents',
      'ReadThrottleEvents',
      'WriteThrottleEvents',
      'WriteThrottleEvents',
    ]);
    expect(JSON.stringify(metrics)).toContain(`"GlobalSecondaryIndexName","Value":"${TABLE.gsi1.indexName}"`);
  });

  it('watches queue age, in-flight messages, and new dead letters as a rate', () => {
    expect(alarm('WebhookQueueAge')).toMatchObject({
      MetricName: 'ApproximateAgeOfOldestMessage',
      Statistic: 'Maximum',
      Threshold: 3600,
    });
    expect(alarm('WebhookInFlight')).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesNotVisible',
      Threshold: IN_FLIGHT_THRESHOLD,
    });
    expect(IN_FLIGHT_THRESHOLD).toBeLessThan(120_000);
    const dead = alarm('WebhookNewDeadLetters');
    // Redrive does not count in the DLQ's NumberOfMessagesSent; the consumer's receives do.
    expect(dead).toMatchObject({ MetricName: 'NumberOfMessagesReceived', Statistic: 'Sum', Period: 300, Threshold: 1 });
    expect(JSON.stringify(dead.Dimensions)).toContain(logicalId(stateful.queues.deadLetterQueue));
    expect(alarms.some(([, a]) => a.Properties.MetricName === 'ApproximateNumberOfMessagesVisible')).toBe(false);
    expect(alarm('StreamFailures')).toMatchObject({ MetricName: 'NumberOfMessagesSent', Statistic: 'Sum' });
    expect(alarm('StreamIteratorAge')).toMatchObject({ MetricName: 'IteratorAge', Threshold: 300_000 });
  });

  it('keeps tenant failures (receivers down) apart from platform failures', () => {
    const tenant = alarm('TenantWebhookFailures');
    expect(tenant).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: WEBHOOK_METRICS.deliveries,
      Dimensions: expect.arrayContaining([
        { Name: 'service', Value: WEBHOOK_METRICS.service },
        { Name: 'outcome', Value: WEBHOOK_METRICS.failedOutcome },
      ]),
    });
    expect(tenant.AlarmDescription).toMatch(/^Tenant:/);
    for (const [id, a] of alarms)
      if (!id.includes('Tenant')) expect(a.Properties.AlarmDescription).toMatch(/^Platform:/);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('Signs and POSTs'),
      Environment: {
        Variables: Match.objectLike({
          POWERTOOLS_SERVICE_NAME: WEBHOOK_METRICS.service,
          POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        }),
      },
    });
  });
});
