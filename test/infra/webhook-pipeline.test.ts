import { describe, expect, it } from 'vitest';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '#shared/config.ts';
import { maxReceiveCount, receivesForSchedule } from '#domain/webhook/retry.ts';
import {
  EXPRESS_MAX_CONCURRENCY,
  laneConcurrency,
  PLATFORM_ERROR_RECEIVES,
  queueMaxReceiveCount,
  SLOW_LANE_AGE_ALARM,
} from '#infra/webhook-settings.ts';
import { DEFAULT_SETTINGS } from '#infra/settings.ts';
import { OUTBOX_BATCH_SIZE } from '#db/event/outbox-stream-filter.ts';
import { EXPRESS_BATCH_SIZE } from '#domain/event/express.ts';
import { actionsOf, logicalId, statementsOf, synthStacks } from './synth.ts';

describe('Webhook pipeline', () => {
  const { api, stateful, data, template } = synthStacks();
  const { queue, slowQueue, deadLetterQueue, streamFailureQueue, expressQueue } = stateful.queues;
  // Cross-stack references: `Ref` exports carry the id after "Ref", attribute exports before the attribute.
  const exportName = (c: Parameters<typeof logicalId>[0], attr: 'Arn' | 'QueueUrl') =>
    attr === 'Arn' ? `FnGetAtt${logicalId(c)}Arn` : `Ref${logicalId(c)}`;
  const imported = (c: Parameters<typeof logicalId>[0], attr: 'Arn' | 'QueueUrl') => ({
    'Fn::ImportValue': Match.stringLikeRegexp(exportName(c, attr)),
  });
  const { eventsFunction, webhooksFunction, deadLetterFunction } = api.webhooks;

  it('feeds the fan-out only outbox INSERTs, with bisection, retries, partial failures and an on-failure queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(eventsFunction) },
      StartingPosition: 'TRIM_HORIZON',
      FilterCriteria: {
        Filters: [
          { Pattern: JSON.stringify({ eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['outbox'] } } } }) },
        ],
      },
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: imported(streamFailureQueue, 'Arn') } },
    });
  });

  it('drains the stream in batches of 100 outbox records, one batch per shard at a time, without a batching window', () => {
    // The capacity model of docs/webhooks.md ("Latency during an import") rests on these three.
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(eventsFunction) },
      BatchSize: OUTBOX_BATCH_SIZE,
      ParallelizationFactor: 1,
      MaximumBatchingWindowInSeconds: Match.absent(),
    });
    expect(OUTBOX_BATCH_SIZE).toBe(100);
  });

  it('tells the signer the alarm topic for operational events (a parked endpoint) and lets it publish there only', () => {
    const topic = { Ref: logicalId(api.alarmTopic.topic) };
    template.hasResourceProperties('AWS::Lambda::Function', {
      FunctionName: Match.absent(),
      Environment: { Variables: Match.objectLike({ OPERATIONS_TOPIC_ARN: topic }) },
    });
    const publishers = Object.values(template.findResources('AWS::IAM::Policy')).filter((p) =>
      JSON.stringify(p.Properties.PolicyDocument).includes('sns:Publish'),
    );
    expect(publishers).toHaveLength(1);
    expect(actionsOf(statementsOf(template, webhooksFunction), 'sns')).toEqual(['sns:Publish']);
  });

  it('gives the signer the queue with partial batch responses, and the dead-letter consumer the DLQ', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: imported(queue, 'Arn'),
      FunctionName: { Ref: logicalId(webhooksFunction) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: imported(deadLetterQueue, 'Arn'),
      FunctionName: { Ref: logicalId(deadLetterFunction) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Description: Match.stringLikeRegexp('dead letters'),
    });
  });

  it('redrives the queue to its DLQ well above the receives the retry schedule needs', () => {
    const limit = queueMaxReceiveCount(DEFAULT_WEBHOOK_RETRY_SCHEDULE);
    expect(limit).toBeGreaterThanOrEqual(receivesForSchedule(DEFAULT_WEBHOOK_RETRY_SCHEDULE) + PLATFORM_ERROR_RECEIVES);
    expect(PLATFORM_ERROR_RECEIVES).toBeGreaterThanOrEqual(20);
    // The signer gives up at its own limit; the queue never before it.
    expect(limit).toBeGreaterThanOrEqual(maxReceiveCount(DEFAULT_WEBHOOK_RETRY_SCHEDULE));
    expect(limit).toBeLessThanOrEqual(1000); // SQS's own ceiling
    // Both lanes: the same budget, retention, visibility and dead-letter queue.
    for (const lane of [queue, slowQueue]) {
      expect(data.toJSON().Resources[logicalId(lane)].Properties).toEqual(
        expect.objectContaining({
          RedrivePolicy: {
            deadLetterTargetArn: { 'Fn::GetAtt': [logicalId(deadLetterQueue), 'Arn'] },
            maxReceiveCount: limit,
          },
          MessageRetentionPeriod: 14 * 24 * 3600,
          VisibilityTimeout: 180,
          SqsManagedSseEnabled: true,
        }),
      );
    }
  });

  it('keeps the queue visibility timeout above the signer timeout', () => {
    const fn = template.findResources('AWS::Lambda::Function', {
      Properties: { Description: Match.stringLikeRegexp('Signs and POSTs') },
    });
    const timeout = Object.values(fn)[0]?.Properties.Timeout as number;
    expect(timeout).toBeGreaterThan(10); // the POST itself may take 10 s
    expect(180).toBeGreaterThan(timeout);
  });

  it('passes both lanes’ queue URLs and the retry schedule to the pipeline functions', () => {
    for (const fn of [eventsFunction, webhooksFunction, deadLetterFunction]) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: Match.objectLike({
            WEBHOOK_QUEUE_URL: imported(queue, 'QueueUrl'),
            WEBHOOK_SLOW_QUEUE_URL: imported(slowQueue, 'QueueUrl'),
            WEBHOOK_RETRY_SCHEDULE: DEFAULT_WEBHOOK_RETRY_SCHEDULE.join(','),
            TABLE_NAME: Match.anyValue(),
          }),
        },
        Description: (fn.node.defaultChild as unknown as { description: string }).description,
      });
    }
  });

  it('lets the signer re-send on its own two queues, and the fan-out send and receive from the express queue only', () => {
    const sqsOf = (fn: Parameters<typeof statementsOf>[1]) => actionsOf(statementsOf(template, fn), 'sqs');
    expect(sqsOf(webhooksFunction)).toEqual(
      expect.arrayContaining([
        'sqs:SendMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:DeleteMessage',
        'sqs:ReceiveMessage',
      ]),
    );
    const signerSends = statementsOf(template, webhooksFunction)
      .filter((s) => JSON.stringify(s.Action).includes('sqs:SendMessage'))
      .map((s) => JSON.stringify(s.Resource));
    // Its own two queues and nothing else: the lanes move deliveries between each other.
    expect(signerSends).toHaveLength(2);
    expect(signerSends.some((r) => r.includes(exportName(queue, 'Arn')))).toBe(true);
    expect(signerSends.some((r) => r.includes(exportName(slowQueue, 'Arn')))).toBe(true);
    expect(sqsOf(eventsFunction)).toContain('sqs:SendMessage');
    expect(sqsOf(deadLetterFunction)).not.toContain('sqs:SendMessage');
    // The fan-out receives from the express queue only.
    const fanOutReceives = statementsOf(template, eventsFunction)
      .filter((s) => JSON.stringify(s.Action).includes('sqs:ReceiveMessage'))
      .map((s) => JSON.stringify(s.Resource));
    expect(fanOutReceives).toEqual([expect.stringContaining(exportName(expressQueue, 'Arn'))]);
  });

  it('feeds order events to the fan-out through the express queue: batches of 10, 5 executions at most, an hour kept', () => {
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(eventsFunction) } },
    });
    const express = Object.values(mappings).filter((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes(exportName(expressQueue, 'Arn')),
    );
    expect(express).toHaveLength(1);
    expect(express[0]!.Properties).toMatchObject({
      BatchSize: EXPRESS_BATCH_SIZE,
      ScalingConfig: { MaximumConcurrency: EXPRESS_MAX_CONCURRENCY },
    });
    expect(express[0]!.Properties.MaximumBatchingWindowInSeconds ?? 0).toBe(0);
    const queues = Template.fromStack(stateful).findResources('AWS::SQS::Queue');
    const props = queues[logicalId(expressQueue)]!.Properties;
    expect(props).toMatchObject({ MessageRetentionPeriod: 3600, VisibilityTimeout: 360 });
    // No redrive: a failed message is the stream's to deliver, never a dead letter.
    expect(props.RedrivePolicy).toBeUndefined();
  });

  it('lets exactly the functions that write orders name their events on the express queue', () => {
    for (const fn of [api.functions.orders!, api.functions.mcp!, api.adminFunction]) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ EXPRESS_QUEUE_URL: imported(expressQueue, 'QueueUrl') }) },
        Description: (fn.node.defaultChild as unknown as { description: string }).description,
      });
      const sends = statementsOf(template, fn)
        .filter((s) => JSON.stringify(s.Action).includes('sqs:SendMessage'))
        .map((s) => JSON.stringify(s.Resource));
      expect(sends).toEqual([expect.stringContaining(exportName(expressQueue, 'Arn'))]);
    }
    for (const fn of [api.functions.catalog!, api.functions.products!, api.functions.content!]) {
      expect(actionsOf(statementsOf(template, fn), 'sqs')).toEqual([]);
    }
  });
  it('alarms, through the alarm topic, when a webhook endpoint is parked', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'EndpointsParked',
      Namespace: 'StoreIntegrations',
      Dimensions: Match.arrayWith([
        { Name: 'reason', Value: 'sustained_failures' },
        { Name: 'service', Value: 'webhooks' },
      ]),
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it('splits the signer’s 50 reserved executions into a fast lane of 45 and a slow lane of 5, batches of 10', () => {
    expect(DEFAULT_SETTINGS.signerConcurrency).toBe(50);
    expect(laneConcurrency(50)).toEqual({ fast: 45, slow: 5 });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('Signs and POSTs'),
      ReservedConcurrentExecutions: 50,
    });
    const mappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(webhooksFunction) } },
    });
    const byQueue = Object.values(mappings).map((m) => ({
      queue: JSON.stringify(m.Properties.EventSourceArn),
      batch: m.Properties.BatchSize,
      max: m.Properties.ScalingConfig?.MaximumConcurrency,
      responses: m.Properties.FunctionResponseTypes,
    }));
    expect(byQueue).toHaveLength(2);
    const fast = byQueue.find((m) => m.queue.includes(exportName(queue, 'Arn')));
    const slow = byQueue.find((m) => m.queue.includes(exportName(slowQueue, 'Arn')));
    expect(fast).toMatchObject({ batch: 10, max: 45, responses: ['ReportBatchItemFailures'] });
    expect(slow).toMatchObject({ batch: 10, max: 5, responses: ['ReportBatchItemFailures'] });
  });

  it('tells the signer when a circuit opens (3 failures in a row) and how many slow-lane attempts an endpoint may have (2)', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('Signs and POSTs'),
      Timeout: 30,
      Environment: {
        Variables: Match.objectLike({
          WEBHOOK_CIRCUIT_AFTER_FAILURES: '3',
          WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT: '2',
        }),
      },
    });
  });

  it('never lets the lanes together exceed the reservation, and gives each the mapping minimum of 2', () => {
    for (const reserved of [2, 3, 4, 10, 50, 51, 200, 1000]) {
      const { fast, slow } = laneConcurrency(reserved);
      expect(slow).toBeGreaterThanOrEqual(2);
      expect(fast).toBeGreaterThanOrEqual(2);
      if (reserved >= 4) expect(fast + slow).toBe(reserved);
    }
    expect(laneConcurrency(0)).toEqual({ fast: 10, slow: 2 });
  });

  it('alarms when the slow lane’s oldest message has waited 30 minutes', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Namespace: 'AWS/SQS',
      Dimensions: [
        {
          Name: 'QueueName',
          Value: { 'Fn::ImportValue': Match.stringLikeRegexp(`FnGetAtt${logicalId(slowQueue)}QueueName`) },
        },
      ],
      Threshold: SLOW_LANE_AGE_ALARM.toSeconds(),
      Statistic: 'Maximum',
      EvaluationPeriods: 2,
      AlarmActions: Match.anyValue(),
    });
    expect(SLOW_LANE_AGE_ALARM.toSeconds()).toBe(1800);
  });
});
