import { describe, expect, it } from 'vitest';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { WebhookPipeline } from '../../infra/constructs/webhook-pipeline.ts';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '../../shared/config.ts';
import { maxReceiveCount } from '../../shared/domain/webhook/retry.ts';

function synth() {
  // No bundling in a unit test: the assertions are about wiring, not the bundle.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Test');
  const table = new dynamodb.Table(stack, 'Table', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    sortKey: { name: 'sk', type: dynamodb.AttributeType.STRING },
    stream: dynamodb.StreamViewType.NEW_IMAGE,
  });
  const pipeline = new WebhookPipeline(stack, 'Webhooks', { table });
  return { template: Template.fromStack(stack), pipeline, stack };
}

describe('WebhookPipeline construct', () => {
  const { template, stack, pipeline } = synth();
  const idOf = (c: { node: { defaultChild?: unknown } }) => stack.getLogicalId(c.node.defaultChild as never);

  it('feeds the fan-out only outbox INSERTs, with bisection, retries, partial failures and an on-failure queue', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^Table'), 'StreamArn'] },
      FunctionName: { Ref: idOf(pipeline.eventsFunction) },
      StartingPosition: 'TRIM_HORIZON',
      FilterCriteria: { Filters: [{ Pattern: JSON.stringify({ eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['outbox'] } } } }) }] },
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [idOf(pipeline.streamFailureQueue), 'Arn'] } } },
    });
  });

  it('gives the signer the queue with partial batch responses and a concurrency cap', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: { 'Fn::GetAtt': [idOf(pipeline.queue), 'Arn'] },
      FunctionName: { Ref: idOf(pipeline.webhooksFunction) },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 10 },
    });
  });

  it('redrives the queue to its DLQ after the receives the retry schedule needs', () => {
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: {
        deadLetterTargetArn: { 'Fn::GetAtt': [idOf(pipeline.deadLetterQueue), 'Arn'] },
        maxReceiveCount: maxReceiveCount(DEFAULT_WEBHOOK_RETRY_SCHEDULE),
      },
      MessageRetentionPeriod: 14 * 24 * 3600,
      VisibilityTimeout: 180,
    });
  });

  it('keeps the queue visibility timeout above the signer timeout', () => {
    const fn = template.findResources('AWS::Lambda::Function', { Properties: { Description: Match.stringLikeRegexp('Signs and POSTs') } });
    const timeout = Object.values(fn)[0]?.Properties.Timeout as number;
    expect(timeout).toBeGreaterThan(10); // the POST itself may take 10 s
    expect(180).toBeGreaterThan(timeout);
  });

  it('passes the queue URL and the retry schedule to both functions', () => {
    for (const fn of [pipeline.eventsFunction, pipeline.webhooksFunction]) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        FunctionName: Match.absent(),
        Environment: {
          Variables: Match.objectLike({
            WEBHOOK_QUEUE_URL: { Ref: idOf(pipeline.queue) },
            WEBHOOK_RETRY_SCHEDULE: DEFAULT_WEBHOOK_RETRY_SCHEDULE.join(','),
            TABLE_NAME: { Ref: Match.stringLikeRegexp('^Table') },
          }),
        },
        Description: fn.node.id === 'EventsFunction' ? Match.stringLikeRegexp('Table stream') : Match.stringLikeRegexp('Signs and POSTs'),
      });
    }
  });

  it('grants each function only the table actions it uses', () => {
    const policies = template.findResources('AWS::IAM::Policy');
    const actionsOf = (fnId: string, service: string) => {
      const policy = Object.entries(policies).find(([id]) => id.startsWith(fnId));
      const statements = (policy?.[1].Properties.PolicyDocument.Statement ?? []) as { Action: string | string[] }[];
      return statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action])).filter((a) => a.startsWith(`${service}:`));
    };
    const eventsId = idOf(pipeline.eventsFunction).replace(/[A-F0-9]{8}$/, '');
    const signerId = idOf(pipeline.webhooksFunction).replace(/[A-F0-9]{8}$/, '');
    const events = actionsOf(eventsId, 'dynamodb');
    const signer = actionsOf(signerId, 'dynamodb');
    expect(signer.sort()).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // The signer schedules its retries with visibility changes; the fan-out only sends.
    expect(actionsOf(signerId, 'sqs')).toEqual(expect.arrayContaining(['sqs:ChangeMessageVisibility', 'sqs:DeleteMessage', 'sqs:ReceiveMessage']));
    expect(actionsOf(signerId, 'sqs')).not.toContain('sqs:SendMessage');
    expect(actionsOf(eventsId, 'sqs')).toContain('sqs:SendMessage');
    expect(actionsOf(eventsId, 'sqs')).not.toContain('sqs:ReceiveMessage');
    expect(events).toEqual(expect.arrayContaining(['dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetRecords']));
    expect(events).not.toContain('dynamodb:DeleteItem');
    expect(events).not.toContain('dynamodb:Scan');
  });

  it('alarms on DLQ depth, stream failures and stream iterator age', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(pipeline.deadLetterQueue), 'QueueName'] } }],
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(pipeline.streamFailureQueue), 'QueueName'] } }],
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'IteratorAge',
      Namespace: 'AWS/Lambda',
      Statistic: 'Maximum',
      Threshold: 300_000,
    });
  });
});
