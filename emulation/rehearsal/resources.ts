/**
 * The stateful resources of the templates, made real on this machine: each
 * `AWS::DynamoDB::Table` in DynamoDB Local (keys, indexes, stream, TTL as the template declares
 * them) and each `AWS::SQS::Queue` in fauxqs (visibility, retention, redrive). Every other
 * resource gets a name and an ARN so that references to it resolve.
 */
import {
  CreateTableCommand,
  DescribeTableCommand,
  UpdateTimeToLiveCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { startFauxqs } from 'fauxqs';
import type { Resolver } from './resolve.ts';
import { keyOf, resourcesOfType, type Assembly, type Json } from './template.ts';

/** Functions reach queues through their own proxy port; the URL in their environment names this host until then. */
export const QUEUE_PROXY_HOST = 'rehearsal-proxy.invalid';

export interface RehearsalTable {
  key: string;
  name: string;
  arn: string;
  streamArn: string | undefined;
  partitionKey: string;
  /** Index name → its partition key attribute. */
  indexPartitionKeys: Record<string, string>;
}
export interface RehearsalQueue {
  key: string;
  name: string;
  arn: string;
  /** Where fauxqs serves it. */
  url: string;
  resourcePolicies: Json[];
}

type Fauxqs = Awaited<ReturnType<typeof startFauxqs>>;
/** `Stack-LogicalId`, shortened from the middle past `max` (CDK logical ids end in a unique hash). */
function physicalName(stack: string, id: string, max = 64): string {
  const name = `${stack}-${id}`;
  return name.length > max ? `${name.slice(0, max - 9)}-${name.slice(-8)}` : name;
}

function hashKey(schema: Json): string {
  return String(
    (schema as { AttributeName: string; KeyType: string }[]).find((k) => k.KeyType === 'HASH')?.AttributeName,
  );
}

export async function createTables(
  assembly: Assembly,
  resolver: Resolver,
  ddb: DynamoDBClient,
  nameOf?: (id: string) => string,
): Promise<RehearsalTable[]> {
  const tables: RehearsalTable[] = [];
  for (const { stack, id, resource } of resourcesOfType(assembly, 'AWS::DynamoDB::Table')) {
    const p = resolver.resolve(stack, (resource.Properties ?? {}) as Json) as Record<string, Json>;
    const name = String(p.TableName ?? nameOf?.(id) ?? physicalName(stack, id, 255));
    const stream = p.StreamSpecification as { StreamViewType?: string } | undefined;
    const existing = await ddb.send(new DescribeTableCommand({ TableName: name })).catch(() => undefined);
    let streamArn = existing?.Table?.LatestStreamArn;
    if (!existing) {
      const gsis = (p.GlobalSecondaryIndexes ?? []) as Record<string, Json>[];
      const out = await ddb.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: p.AttributeDefinitions as never,
          KeySchema: p.KeySchema as never,
          BillingMode: 'PAY_PER_REQUEST',
          ...(gsis.length
            ? {
                GlobalSecondaryIndexes: gsis.map((g) => ({
                  IndexName: g.IndexName,
                  KeySchema: g.KeySchema,
                  Projection: g.Projection,
                })) as never,
              }
            : {}),
          ...(p.LocalSecondaryIndexes ? { LocalSecondaryIndexes: p.LocalSecondaryIndexes as never } : {}),
          ...(stream?.StreamViewType
            ? { StreamSpecification: { StreamEnabled: true, StreamViewType: stream.StreamViewType as never } }
            : {}),
        }),
      );
      streamArn = out.TableDescription?.LatestStreamArn;
      const ttl = p.TimeToLiveSpecification as { AttributeName?: string; Enabled?: boolean } | undefined;
      if (ttl?.Enabled && ttl.AttributeName) {
        await ddb.send(
          new UpdateTimeToLiveCommand({
            TableName: name,
            TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
          }),
        );
      }
    }
    const arn = `arn:aws:dynamodb:${assembly.region}:${assembly.account}:table/${name}`;
    resolver.define(stack, id, { ref: name, attributes: { Arn: arn, ...(streamArn ? { StreamArn: streamArn } : {}) } });
    const indexes = [
      ...((p.GlobalSecondaryIndexes ?? []) as Json[]),
      ...((p.LocalSecondaryIndexes ?? []) as Json[]),
    ] as { IndexName: string; KeySchema: Json }[];
    tables.push({
      key: keyOf(stack, id),
      name,
      arn,
      streamArn,
      partitionKey: hashKey(p.KeySchema as Json),
      indexPartitionKeys: Object.fromEntries(indexes.map((i) => [i.IndexName, hashKey(i.KeySchema)])),
    });
  }
  return tables;
}

/** Queues in redrive order (a dead-letter queue before the queue that names it). */
export function createQueues(assembly: Assembly, resolver: Resolver, fauxqs: Fauxqs): RehearsalQueue[] {
  const pending = resourcesOfType(assembly, 'AWS::SQS::Queue');
  const queues: RehearsalQueue[] = [];
  while (pending.length) {
    const index = pending.findIndex(({ stack, resource }) => {
      const target = (resource.Properties?.RedrivePolicy as { deadLetterTargetArn?: Json } | undefined)
        ?.deadLetterTargetArn;
      return !target || !String(resolver.resolve(stack, target)).startsWith('<unresolved');
    });
    if (index < 0) throw new Error(`queues with unresolvable redrive targets: ${pending.map((q) => q.id).join(', ')}`);
    const [{ stack, id, resource }] = pending.splice(index, 1) as [(typeof pending)[number]];
    const p = resolver.resolve(stack, (resource.Properties ?? {}) as Json) as Record<string, Json>;
    const name =
      String(p.QueueName ?? physicalName(stack, id, p.FifoQueue ? 75 : 80)) +
      (p.FifoQueue && !p.QueueName ? '.fifo' : '');
    const attributes: Record<string, string> = {};
    for (const attr of [
      'VisibilityTimeout',
      'MessageRetentionPeriod',
      'DelaySeconds',
      'ReceiveMessageWaitTimeSeconds',
      'MaximumMessageSize',
      'FifoQueue',
      'ContentBasedDeduplication',
    ]) {
      if (p[attr] !== undefined) attributes[attr] = String(p[attr]);
    }
    if (p.RedrivePolicy) attributes.RedrivePolicy = JSON.stringify(p.RedrivePolicy);
    const created = fauxqs.createQueue(name, { attributes });
    resolver.define(stack, id, {
      ref: `http://sqs.${assembly.region}.${QUEUE_PROXY_HOST}/${assembly.account}/${name}`,
      attributes: {
        Arn: created.queueArn,
        QueueName: name,
        QueueUrl: `http://sqs.${assembly.region}.${QUEUE_PROXY_HOST}/${assembly.account}/${name}`,
      },
    });
    queues.push({ key: keyOf(stack, id), name, arn: created.queueArn, url: created.queueUrl, resourcePolicies: [] });
  }
  for (const { stack, resource } of resourcesOfType(assembly, 'AWS::SQS::QueuePolicy')) {
    const p = resolver.resolve(stack, (resource.Properties ?? {}) as Json) as {
      Queues: string[];
      PolicyDocument: Json;
    };
    for (const url of p.Queues) queues.find((q) => url.endsWith(`/${q.name}`))?.resourcePolicies.push(p.PolicyDocument);
  }
  return queues;
}

/** Names and ARNs for what the rehearsal does not run (roles, log groups, keys, API parts). */
export function nameTheRest(assembly: Assembly, resolver: Resolver): void {
  const { region, account } = assembly;
  for (const { stackName: stack, template } of assembly.stacks) {
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resolver.lookup(stack, id)) continue;
      const name = physicalName(stack, id, resource.Type.startsWith('AWS::ApiGateway') ? 1024 : 64);
      const arns: Record<string, Record<string, string>> = {
        'AWS::IAM::Role': { Arn: `arn:aws:iam::${account}:role/${name}`, RoleId: name },
        'AWS::Lambda::Function': { Arn: `arn:aws:lambda:${region}:${account}:function:${name}` },
        'AWS::Logs::LogGroup': { Arn: `arn:aws:logs:${region}:${account}:log-group:${name}:*` },
        'AWS::KMS::Key': { Arn: `arn:aws:kms:${region}:${account}:key/${name}`, KeyId: name },
        'AWS::ApiGateway::RestApi': { RootResourceId: `${name}-root` },
        'AWS::SNS::Topic': { TopicArn: `arn:aws:sns:${region}:${account}:${name}` },
        'AWS::WAFv2::WebACL': { Arn: `arn:aws:wafv2:${region}:${account}:regional/webacl/${name}/rehearsal`, Id: name },
      };
      const ref = resource.Type === 'AWS::SNS::Topic' ? arns[resource.Type]!.TopicArn! : name;
      resolver.define(stack, id, { ref, attributes: arns[resource.Type] ?? {} });
    }
  }
}
