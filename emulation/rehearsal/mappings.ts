/**
 * Each `AWS::Lambda::EventSourceMapping`, run by the local pollers with the template's settings:
 * a table stream (filter criteria, batch size, retry attempts, batch-item failures, on-failure
 * destination) through StreamPoller; a queue (batch size, maximum concurrency) through pollQueue,
 * the queue's own redrive policy sending what keeps failing to its dead-letter queue. As
 * CloudFormation does when it creates a mapping, the function's role must be allowed to read the
 * source and write the destination, or the stack does not start.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { matchesFilter, type FilterPattern } from '#db/core/stream-filter.ts';
import { StreamPoller } from '#emulation/local/stream-poller.ts';
import { pollQueue } from '#emulation/local/queue-poller.ts';
import type { FunctionSpec } from './functions.ts';
import type { IamEvaluator } from './iam.ts';
import type { Resolver } from './resolve.ts';
import type { RehearsalQueue, RehearsalTable } from './resources.ts';
import { resourcesOfType, type Assembly, type Json } from './template.ts';

export interface MappingContext {
  assembly: Assembly;
  resolver: Resolver;
  tables: RehearsalTable[];
  queues: RehearsalQueue[];
  functions: FunctionSpec[];
  iam: IamEvaluator;
  dynamodbEndpoint: string;
  fauxqsEndpoint: string;
  invoke: (functionArn: string, event: unknown) => Promise<unknown>;
  signal: AbortSignal;
  log: (line: string) => void;
}

async function requireGrants(
  ctx: MappingContext,
  fn: FunctionSpec,
  actions: string[],
  resource: string,
  what: string,
): Promise<void> {
  for (const action of actions) {
    const decision = await ctx.iam.decide(fn, { action, resource, context: {} });
    if (!decision.allowed)
      throw new Error(
        `event-source mapping of ${fn.logicalId}: its role is not allowed ${action} on ${resource} (${what}); CloudFormation would fail the deploy`,
      );
  }
}

export async function startMappings(ctx: MappingContext): Promise<Promise<void>[]> {
  const loops: Promise<void>[] = [];
  const sqsClient = new SQSClient({
    endpoint: ctx.fauxqsEndpoint,
    region: ctx.assembly.region,
    credentials: { accessKeyId: 'lambda-service', secretAccessKey: 'local' },
  });
  for (const { stack, id, resource } of resourcesOfType(ctx.assembly, 'AWS::Lambda::EventSourceMapping')) {
    const p = ctx.resolver.resolve(stack, (resource.Properties ?? {}) as Json) as Record<string, Json>;
    const fn = ctx.functions.find((f) => f.name === p.FunctionName || f.arn === p.FunctionName);
    if (!fn) throw new Error(`event-source mapping ${id}: no function ${String(p.FunctionName)}`);
    if (p.Enabled === false) continue;
    const sourceArn = String(p.EventSourceArn);
    const reportsItemFailures = ((p.FunctionResponseTypes ?? []) as string[]).includes('ReportBatchItemFailures');
    const table = ctx.tables.find((t) => t.streamArn === sourceArn);
    const queue = ctx.queues.find((q) => q.arn === sourceArn);
    if (table) {
      await requireGrants(
        ctx,
        fn,
        ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
        sourceArn,
        'the stream',
      );
      const patterns = ((p.FilterCriteria as { Filters?: { Pattern: string }[] } | undefined)?.Filters ?? []).map(
        (f) => JSON.parse(f.Pattern) as FilterPattern,
      );
      const failureArn = (p.DestinationConfig as { OnFailure?: { Destination?: string } } | undefined)?.OnFailure
        ?.Destination;
      const failureQueue = ctx.queues.find((q) => q.arn === failureArn);
      if (failureArn) await requireGrants(ctx, fn, ['sqs:SendMessage'], failureArn, 'the on-failure destination');
      const retries = Number(p.MaximumRetryAttempts ?? -1);
      const poller = new StreamPoller(
        sourceArn,
        ctx.dynamodbEndpoint,
        async (event) => {
          const out = (await ctx.invoke(fn.arn, event)) as { batchItemFailures?: { itemIdentifier: string }[] } | null;
          return { batchItemFailures: reportsItemFailures ? (out?.batchItemFailures ?? []) : [] };
        },
        ctx.signal,
        {
          filter: (record: unknown) =>
            patterns.length === 0 || patterns.some((pattern) => matchesFilter(pattern, record)),
          batchSize: Number(p.BatchSize ?? 100),
          consumer: id,
          retryAttempts: retries < 0 ? Number.MAX_SAFE_INTEGER : retries,
          onFailure: async (record) => {
            if (!failureQueue) return;
            const info = {
              shardId: record.eventID,
              startSequenceNumber: record.dynamodb?.SequenceNumber,
              batchSize: 1,
              streamArn: sourceArn,
            };
            await sqsClient.send(
              new SendMessageCommand({
                QueueUrl: failureQueue.url,
                MessageBody: JSON.stringify({
                  requestContext: { functionArn: fn.arn, condition: 'RetryAttemptsExhausted' },
                  DDBStreamBatchInfo: info,
                }),
              }),
            );
          },
        },
      );
      loops.push(poller.run());
      ctx.log(
        `  stream ${table.name} → ${fn.logicalId} (batch ${String(p.BatchSize ?? 100)}, ${patterns.length} filter(s), retries ${retries}${failureQueue ? `, on failure → ${failureQueue.name}` : ''})`,
      );
    } else if (queue) {
      await requireGrants(
        ctx,
        fn,
        ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
        sourceArn,
        'the queue',
      );
      const concurrency = Math.min(
        Number((p.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency ?? 5),
        4,
      );
      for (let i = 0; i < concurrency; i++) {
        loops.push(
          pollQueue(
            queue,
            async (event) => {
              const out = (await ctx.invoke(fn.arn, event)) as {
                batchItemFailures?: { itemIdentifier: string }[];
              } | null;
              return { batchItemFailures: reportsItemFailures ? (out?.batchItemFailures ?? []) : [] };
            },
            ctx.signal,
            { client: sqsClient, batchSize: Number(p.BatchSize ?? 10) },
          ),
        );
      }
      ctx.log(`  queue ${queue.name} → ${fn.logicalId} (batch ${String(p.BatchSize ?? 10)}, ${concurrency} pollers)`);
    } else {
      throw new Error(
        `event-source mapping ${id}: source ${sourceArn} is neither a table stream nor a queue of the templates`,
      );
    }
  }
  return loops;
}
