/**
 * What IAM authorizes for one AWS API request a function sends: the action(s), the resource ARN
 * and the request's condition keys, derived the way DynamoDB and SQS authorize them. A
 * transaction is authorized item by item (`dynamodb:PutItem`, `dynamodb:UpdateItem`, ... per
 * item); a batch once per table with all its partition keys as `dynamodb:LeadingKeys`.
 */
import type { IntegratorAws } from '#emulation/local/integrator-aws.ts';
import type { RehearsalQueue, RehearsalTable } from './resources.ts';

export interface AuthorizationCheck {
  action: string;
  resource: string;
  context: Record<string, string | string[]>;
}

type AttributeValue = { S?: string; N?: string; B?: string };
type Item = Record<string, AttributeValue>;
type Body = Record<string, unknown>;

const scalar = (v: AttributeValue | undefined) => v?.S ?? v?.N ?? v?.B;

export interface RequestTarget {
  tables: readonly RehearsalTable[];
  queues: readonly RehearsalQueue[];
  /** KMS keys by ARN, with the key policy KMS evaluates beside the caller's role. */
  kmsKeys: readonly { arn: string; policy: Record<string, unknown> }[];
  region: string;
  account: string;
  /** The integrator's account of SQS and EventBridge destinations (STS, EventBridge, its roles' sessions). */
  integrator?: IntegratorAws;
  /** The Lambda Invoke API (the rehearsal's own port, known once it listens): the admin asks the signer to ping. */
  lambdaEndpoint?: string;
  /** Function ARNs by name, for Invoke's resource. */
  functionArns?: Map<string, string>;
}

function tableArn(t: RequestTarget, name: string): string {
  return (
    t.tables.find((x) => x.name === name || x.arn === name)?.arn ??
    `arn:aws:dynamodb:${t.region}:${t.account}:table/${name}`
  );
}

function leadingKey(t: RequestTarget, tableName: string, item: Item | undefined): string[] {
  const table = t.tables.find((x) => x.name === tableName || x.arn === tableName);
  const value = table && item ? scalar(item[table.partitionKey]) : undefined;
  return value === undefined ? [] : [value];
}

/** The partition key value a Query's key condition names (`#pk = :v`, `pk = :v`). */
function queryLeadingKeys(t: RequestTarget, body: Body): string[] {
  const table = t.tables.find((x) => x.name === body.TableName || x.arn === body.TableName);
  if (!table) return [];
  const keyName = body.IndexName ? table.indexPartitionKeys[String(body.IndexName)] : table.partitionKey;
  const names = (body.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (body.ExpressionAttributeValues ?? {}) as Item;
  const expr = String(body.KeyConditionExpression ?? '');
  for (const m of expr.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const name = m[1]!.startsWith('#') ? names[m[1]!] : m[1];
    if (name === keyName) return [scalar(values[m[2]!])].filter((v): v is string => v !== undefined);
  }
  return [];
}

function withOptional(context: Record<string, string | string[]>, body: Body): Record<string, string | string[]> {
  if (typeof body.Select === 'string') context['dynamodb:Select'] = body.Select;
  if (typeof body.ReturnValues === 'string') context['dynamodb:ReturnValues'] = body.ReturnValues;
  return context;
}

const TRANSACT_ACTIONS: Record<string, string> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
  Get: 'GetItem',
};

export function dynamoDbChecks(t: RequestTarget, operation: string, body: Body): AuthorizationCheck[] {
  const action = `dynamodb:${operation}`;
  switch (operation) {
    case 'GetItem':
    case 'DeleteItem':
    case 'UpdateItem':
    case 'PutItem': {
      const table = String(body.TableName);
      const key = (operation === 'PutItem' ? body.Item : body.Key) as Item;
      return [
        {
          action,
          resource: tableArn(t, table),
          context: withOptional({ 'dynamodb:LeadingKeys': leadingKey(t, table, key) }, body),
        },
      ];
    }
    case 'Query':
    case 'Scan': {
      const arn = tableArn(t, String(body.TableName));
      const resource = body.IndexName ? `${arn}/index/${String(body.IndexName)}` : arn;
      const keys = operation === 'Query' ? queryLeadingKeys(t, body) : [];
      return [{ action, resource, context: withOptional(keys.length ? { 'dynamodb:LeadingKeys': keys } : {}, body) }];
    }
    case 'BatchGetItem':
    case 'BatchWriteItem':
      return Object.entries((body.RequestItems ?? {}) as Record<string, unknown>).map(([table, request]) => {
        const items =
          operation === 'BatchGetItem'
            ? ((request as { Keys?: Item[] }).Keys ?? [])
            : ((request as { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]).map(
                (r) => r.PutRequest?.Item ?? r.DeleteRequest?.Key,
              ) as Item[]);
        return {
          action,
          resource: tableArn(t, table),
          context: { 'dynamodb:LeadingKeys': [...new Set(items.flatMap((i) => leadingKey(t, table, i)))] },
        };
      });
    case 'TransactWriteItems':
    case 'TransactGetItems':
      return ((body.TransactItems ?? []) as Record<string, Body>[]).flatMap((entry) =>
        Object.entries(entry).map(([kind, part]) => {
          const table = String(part.TableName);
          const key = (part.Item ?? part.Key) as Item;
          return {
            action: `dynamodb:${TRANSACT_ACTIONS[kind] ?? kind}`,
            resource: tableArn(t, table),
            context: { 'dynamodb:LeadingKeys': leadingKey(t, table, key) },
          };
        }),
      );
    case 'ListTables':
      return [{ action, resource: '*', context: {} }];
    default:
      return [{ action, resource: body.TableName ? tableArn(t, String(body.TableName)) : '*', context: {} }];
  }
}

/** SQS: one action per API (the batch APIs authorize as their single-message action). */
export function sqsChecks(
  t: RequestTarget,
  operation: string,
  body: Body,
): { checks: AuthorizationCheck[]; queue: RehearsalQueue | undefined } {
  const name = String(
    body.QueueName ??
      String(body.QueueUrl ?? '')
        .split('/')
        .pop(),
  );
  const queue = t.queues.find((q) => q.name === name);
  const action = `sqs:${operation.replace(/Batch$/, '')}`;
  const resource = queue?.arn ?? `arn:aws:sqs:${t.region}:${t.account}:${name}`;
  return {
    checks: operation === 'ListQueues' ? [{ action, resource: '*', context: {} }] : [{ action, resource, context: {} }],
    queue,
  };
}

/** STS AssumeRole (query protocol): the role is the resource, the external id a condition key. */
export function stsChecks(form: URLSearchParams): AuthorizationCheck[] {
  const externalId = form.get('ExternalId');
  return [
    {
      action: `sts:${form.get('Action') ?? ''}`,
      resource: form.get('RoleArn') ?? '*',
      context: externalId === null ? {} : { 'sts:ExternalId': externalId },
    },
  ];
}

/** EventBridge PutEvents: `events:PutEvents` on each entry's bus (the default bus of the region when none is named). */
export function eventBridgeChecks(
  t: RequestTarget,
  operation: string,
  body: Body,
  account: string,
): AuthorizationCheck[] {
  if (operation !== 'PutEvents') return [{ action: `events:${operation}`, resource: '*', context: {} }];
  const entries = (body.Entries ?? []) as { EventBusName?: string }[];
  const buses = [
    ...new Set(entries.map((e) => e.EventBusName || `arn:aws:events:${t.region}:${account}:event-bus/default`)),
  ];
  return buses.map((bus) => ({
    action: 'events:PutEvents',
    resource: bus.startsWith('arn:') ? bus : `arn:aws:events:${t.region}:${account}:event-bus/${bus}`,
    context: {},
  }));
}

/**
 * The ARN of the queue an SQS request names by URL, for a queue the templates do not hold (an
 * integrator's queue): `…/<account>/<name>` in the request's region, in `account` when given.
 */
export function queueArnOfUrl(region: string, url: string, account?: string): string {
  const [inUrl = '', name = ''] = url.split('/').slice(-2);
  return `arn:aws:sqs:${region}:${account ?? inUrl}:${name}`;
}
