import {
  CreateTableCommand,
  DescribeTableCommand,
  ListTablesCommand,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { rawDb, tableName } from './client.ts';
import { createTableInput, TABLE } from './table.ts';

/**
 * Waits until the store answers. DynamoDB Local takes a second or two to start on an idle
 * machine and well over 30 s on a loaded one (a JVM starting on two busy cores), so the deadline
 * is generous: it is there to report a store that never comes, not to time a slow one.
 */
export async function waitForStore(timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      await rawDb().send(new ListTablesCommand({ Limit: 1 }));
      return;
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`the DynamoDB endpoint did not answer within ${timeoutMs} ms: ${(last as Error)?.message}`);
}

/** Creates the table (same definition as the CDK stack) with its stream and TTL, if missing. */
export async function ensureTable(): Promise<{ created: boolean; streamArn: string | undefined }> {
  const name = tableName();
  try {
    const out = await rawDb().send(new DescribeTableCommand({ TableName: name }));
    return { created: false, streamArn: out.Table?.LatestStreamArn };
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  const created = await rawDb().send(new CreateTableCommand(createTableInput(name)));
  await rawDb().send(
    new UpdateTimeToLiveCommand({ TableName: name, TimeToLiveSpecification: { Enabled: true, AttributeName: TABLE.ttlAttribute } }),
  );
  return { created: true, streamArn: created.TableDescription?.LatestStreamArn };
}
