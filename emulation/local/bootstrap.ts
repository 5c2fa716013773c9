import {
  type DynamoDBClient,
  CreateTableCommand,
  DescribeTableCommand,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { rawDb, sendWithin, TABLE_COMMAND_BUDGET_MS, tableName } from '#db/core/client.ts';
import { config } from '#shared/config.ts';
import { newContext } from '#shared/context.ts';
import { TABLE } from '#db/core/table.ts';

/**
 * The table the stateful stack (infra/) declares, as a CreateTable input: the same names from
 * shared/db/core/table.ts, so the two cannot drift. In AWS, CloudFormation creates the table.
 */
export function createTableInput(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      { AttributeName: TABLE.partitionKey, AttributeType: 'S' as const },
      { AttributeName: TABLE.sortKey, AttributeType: 'S' as const },
      { AttributeName: TABLE.gsi1.partitionKey, AttributeType: 'S' as const },
      { AttributeName: TABLE.gsi1.sortKey, AttributeType: 'S' as const },
    ],
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: TABLE.gsi1.indexName,
        KeySchema: [
          { AttributeName: TABLE.gsi1.partitionKey, KeyType: 'HASH' as const },
          { AttributeName: TABLE.gsi1.sortKey, KeyType: 'RANGE' as const },
        ],
        Projection: { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...TABLE.gsi1.projectedAttributes] },
      },
    ],
    StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' as const },
  };
}

/**
 * The store and table a start-up step works on: this process's own (shared/config.ts) unless
 * given, as by the use-case tests' global set-up, which starts a store for its workers and keeps
 * its own process's configuration untouched (test/fixtures/usecase-setup.ts).
 */
export interface TableTarget {
  client: DynamoDBClient;
  tableName: string;
}

const configured = (): TableTarget => ({ client: rawDb(), tableName: tableName() });

/** Waits until the store answers: DynamoDB Local takes a second or two to start on an idle machine, 40 s on a loaded 2-core one. */
export async function waitForStore(timeoutMs = 180_000, target: TableTarget = configured()): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      // Within a call's budget, as every call the product sends (shared/db/core/client.ts).
      await sendWithin(
        target.client,
        config().dynamodbCallTimeoutMs,
        newContext(),
        new ListTablesCommand({ Limit: 1 }),
      );
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`the DynamoDB endpoint did not answer within ${timeoutMs} ms: ${(last as Error)?.message}`);
}

/** Creates the table (same definition as the CDK stack) with its stream and TTL, if missing. */
export async function ensureTable(
  target: TableTarget = configured(),
): Promise<{ created: boolean; streamArn: string | undefined }> {
  const { client, tableName: name } = target;
  // A cold store takes its time to create or describe a table: these calls have a budget of their own.
  const send = <C extends Parameters<typeof sendWithin>[3]>(command: C) =>
    sendWithin(client, TABLE_COMMAND_BUDGET_MS, newContext(), command);
  try {
    const out = await send(new DescribeTableCommand({ TableName: name }));
    return { created: false, streamArn: out.Table?.LatestStreamArn };
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  const created = await send(new CreateTableCommand(createTableInput(name)));
  await send(
    new UpdateTimeToLiveCommand({
      TableName: name,
      TimeToLiveSpecification: { Enabled: true, AttributeName: TABLE.ttlAttribute },
    }),
  );
  return { created: true, streamArn: created.TableDescription?.LatestStreamArn };
}
