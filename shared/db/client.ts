import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { CONNECT_TIMEOUT_MS, guardStoreCalls, LOCAL_CONNECT_TIMEOUT_MS } from './store-availability.ts';
import { holdWritesInDryRun } from './dry-run.ts';
import { awsClientBuilt, awsClientDropped } from '#shared/aws-clients.ts';

/**
 * Round trips and capacity units of the current request. Every DynamoDB call made inside
 * `withDbStats` is counted here, and the request log line prints the totals, so the cost of each
 * endpoint is visible in every log line and in the benchmark, not guessed.
 */
export interface DbStats {
  calls: number;
  rcu: number;
  wcu: number;
  ops: string[];
}

const statsStore = new AsyncLocalStorage<DbStats>();

export function withDbStats<T>(fn: () => Promise<T>): Promise<{ result: T; stats: DbStats }> {
  const stats: DbStats = { calls: 0, rcu: 0, wcu: 0, ops: [] };
  return statsStore.run(stats, async () => ({ result: await fn(), stats }));
}

export function currentDbStats(): DbStats | undefined {
  return statsStore.getStore();
}

/** Runs `fn` outside the current request's counts: for calls that are not the request's cost. */
export function outsideDbStats<T>(fn: () => Promise<T>): Promise<T> {
  return statsStore.exit(fn);
}

/**
 * Middleware a host adds to every client this module builds, now and after a reset. The product
 * adds none; an emulator that needs one (the local stack's commit barrier) registers it at
 * start-up, so that this module keeps no branch for it.
 */
export type DbClientDecorator = (client: DynamoDBClient) => void;
const decorators: DbClientDecorator[] = [];

export function decorateDbClients(decorate: DbClientDecorator): void {
  decorators.push(decorate);
  if (clients) decorate(clients.base);
}

type Capacity = { ReadCapacityUnits?: number; WriteCapacityUnits?: number; CapacityUnits?: number };

function addCapacity(stats: DbStats, operation: string, consumed: Capacity | Capacity[] | undefined) {
  if (!consumed) return;
  for (const c of Array.isArray(consumed) ? consumed : [consumed]) {
    const read = c.ReadCapacityUnits ?? 0;
    const write = c.WriteCapacityUnits ?? 0;
    // Some responses only carry CapacityUnits; attribute them by the kind of operation.
    const total = c.CapacityUnits ?? 0;
    const isWrite = /Put|Update|Delete|TransactWrite|BatchWrite/.test(operation);
    stats.rcu += read || (isWrite ? 0 : total);
    stats.wcu += write || (isWrite ? total : 0);
  }
}

function createClients() {
  const cfg = config();
  const local = cfg.dynamodbEndpoint !== undefined;
  const base = new DynamoDBClient({
    region: cfg.region,
    ...(local
      ? {
          endpoint: cfg.dynamodbEndpoint,
          // DynamoDB Local accepts any credentials; real ones are never needed locally.
          credentials: {
            accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local',
            secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
          },
        }
      : {}),
    maxAttempts: 4,
    // Without it (and the call budget below) a stopped store holds a request for as long as the
    // OS keeps the socket open. No per-attempt request timeout: the call budget ends the attempt.
    // DynamoDB Local's accept thread on a loaded machine was seen taking over a second to connect.
    requestHandler: { connectionTimeout: local ? LOCAL_CONNECT_TIMEOUT_MS : CONNECT_TIMEOUT_MS },
  });
  guardStoreCalls(base, cfg.dynamodbCallTimeoutMs);
  // The SDK's logger middleware passes every command's input and output through its sensitive-data
  // filter (a walk of every attribute read) to hand them to the client's logger, even to the
  // default no-op one. Nothing here logs SDK calls: without it a 15-product BatchGetItem takes
  // ~12% less CPU.
  base.middlewareStack.remove('loggerMiddleware');
  base.middlewareStack.add(
    (next, context) => async (args) => {
      const stats = statsStore.getStore();
      if (!stats) return next(args);
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity ??= 'TOTAL';
      stats.calls += 1;
      stats.ops.push(context.commandName?.replace(/Command$/, '') ?? 'unknown');
      const out = await next(args);
      const output = out.output as { ConsumedCapacity?: Capacity | Capacity[] };
      addCapacity(stats, context.commandName ?? '', output.ConsumedCapacity);
      return out;
    },
    { step: 'initialize', name: 'countRoundTrips' },
  );
  holdWritesInDryRun(base);
  for (const decorate of decorators) decorate(base);
  awsClientBuilt(base);
  const doc = DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
  return { base, doc };
}

let clients: ReturnType<typeof createClients> | undefined;

/** Built once per process (a Lambda container or the local server) and reused. */
export function db(): DynamoDBDocumentClient {
  clients ??= createClients();
  return clients.doc;
}

export function rawDb(): DynamoDBClient {
  clients ??= createClients();
  return clients.base;
}

export function tableName(): string {
  return config().tableName;
}

/** For the local stack and tests, which point the process at a new endpoint. */
export function resetDbClients(): void {
  clients?.base.destroy();
  awsClientDropped(clients?.base);
  clients = undefined;
}
