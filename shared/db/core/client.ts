import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { holdWritesInDryRun } from './dry-run.ts';
import { awsClientBuilt, awsClientDropped } from '#shared/aws-clients.ts';
import { DomainError } from '#domain/errors.ts';
import { deadlineSignal, remainingMs } from '#domain/time.ts';

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
  // Announced like every AWS client the product builds: a host that instruments clients (Tracer in
  // the signer, the local stack's commit barrier) does it from outside (shared/aws-clients.ts).
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

/**
 * A store that is down, stopped or throttling must cost a request a few seconds and a retryable
 * answer (503 `service_unavailable` with `Retry-After`), never a hang and never a 500
 * (docs/availability.md). Three limits make that so:
 *
 * - the HTTP handler's connect timeout (a refused or unroutable store fails in about a second);
 * - a budget per DynamoDB call, the SDK's own retries included: the call is abandoned, socket and
 *   all, when the budget or the request's deadline (shared/domain/time.ts) ends, whichever
 *   comes first;
 * - every failure that says "the store is not answering" becomes one DomainError, so each front
 *   (HTTP, MCP, authorizer, admin CLI) answers it the same way.
 */
export const CONNECT_TIMEOUT_MS = 1000;
/** Against DynamoDB Local: a refused connection still fails at once; a slow accept is not an outage. */
export const LOCAL_CONNECT_TIMEOUT_MS = 10_000;
/** Seconds a client is told to wait before retrying an unreachable or slow store. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;
/** ... and a throttling one: the SDK already backed off three times inside the call. */
export const THROTTLED_RETRY_AFTER_S = 1;

/** Creating or describing the table at start-up (a cold store) is not a request's read or write. */
const TABLE_COMMANDS = /^(Create|Describe|Update|Delete)Table(Command)?$|^UpdateTimeToLive(Command)?$/;
const TABLE_COMMAND_BUDGET_MS = 60_000;

/** Where the SDK (smithy) keeps per-call settings in a middleware's context (@smithy/types SMITHY_CONTEXT_KEY). */
const SMITHY_CONTEXT = '__smithy_context';

/** The signal of the DynamoDB call in progress, read by the HTTP handler (see guardStoreCalls). */
const callSignals = new AsyncLocalStorage<AbortSignal>();

class StoreCallTimeout extends Error {
  constructor(readonly budgetMs: number) {
    super(`no answer from DynamoDB within ${budgetMs} ms`);
    this.name = 'StoreCallTimeout';
  }
}

const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
]);
const STORE_FAULTS = new Set(['InternalServerError', 'ServiceUnavailable', 'InternalFailure']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);

type SdkError = Error & {
  code?: string;
  $metadata?: { httpStatusCode?: number };
  CancellationReasons?: { Code?: string }[];
  cause?: unknown;
};

const unavailable = (why: string, retryAfter = UNAVAILABLE_RETRY_AFTER_S) =>
  new DomainError(
    'service_unavailable',
    `The data store is unavailable right now (${why}); retry after ${retryAfter} s.`,
    null,
    retryAfter,
  );

/**
 * The DomainError a store failure answers with, or undefined for an error that is an answer from
 * a healthy store (a failed condition, a validation error) and must reach its caller unchanged.
 */
export function storeUnavailable(err: unknown): DomainError | undefined {
  if (err instanceof DomainError || !(err instanceof Error)) return undefined;
  const e = err as SdkError;
  if (e instanceof StoreCallTimeout) return unavailable(`no answer within ${e.budgetMs} ms`);
  if (e.name === 'DeadlineExceeded' || e.name === 'AbortError' || e.name === 'TimeoutError')
    return unavailable('no answer in time');
  if (THROTTLING.has(e.name)) return unavailable('throttling', THROTTLED_RETRY_AFTER_S);
  if (e.name === 'TransactionCanceledException') {
    // Cancelled only because a participating item was throttled: no condition said no.
    const codes = (e.CancellationReasons ?? []).map((r) => r.Code ?? 'None').filter((c) => c !== 'None');
    return codes.length > 0 && codes.every((c) => THROTTLING.has(c))
      ? unavailable('throttling', THROTTLED_RETRY_AFTER_S)
      : undefined;
  }
  if (STORE_FAULTS.has(e.name) || (e.$metadata?.httpStatusCode ?? 0) >= 500)
    return unavailable('the store answered with an error');
  const code = e.code ?? (e.cause as { code?: string } | undefined)?.code;
  if (code && NETWORK_CODES.has(code))
    return unavailable(
      code === 'ECONNREFUSED' ? 'could not connect: connection refused' : `connection failed: ${code}`,
    );
  return undefined;
}

/**
 * Installs the call budget on a client (built with a connect timeout). Outermost middleware, so the SDK's retries (maxAttempts) run inside the
 * budget; the budget's signal also reaches the HTTP handler, which destroys the socket.
 */
export function guardStoreCalls(client: DynamoDBClient, callBudgetMs: number): void {
  const handler = client.config.requestHandler as {
    handle: (request: unknown, options?: { abortSignal?: unknown }) => Promise<unknown>;
  };
  const handle = handler.handle.bind(handler);
  // The SDK hands its handler the options given to `send` only; the call's signal comes from here.
  handler.handle = (request, options) =>
    handle(request, { ...options, abortSignal: callSignals.getStore() ?? options?.abortSignal });

  client.middlewareStack.add(
    (next, context) => async (args) => {
      const left = remainingMs();
      if (left <= 0) throw unavailable('the request ran out of time');
      const budget = Math.min(
        TABLE_COMMANDS.test(context.commandName ?? '') ? TABLE_COMMAND_BUDGET_MS : callBudgetMs,
        left,
      );
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new StoreCallTimeout(budget)), budget);
      const deadline = deadlineSignal();
      const onDeadline = () => controller.abort(deadline?.reason);
      deadline?.addEventListener('abort', onDeadline, { once: true });
      // The SDK's retry loop reads this to stop waiting between attempts once aborted.
      const smithy = ((context as Record<string, unknown>)[SMITHY_CONTEXT] ??= {}) as { abortSignal?: AbortSignal };
      smithy.abortSignal ??= controller.signal;
      let onAbort = () => {};
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(controller.signal.reason);
        controller.signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        return await Promise.race([callSignals.run(controller.signal, () => next(args)), aborted]);
      } catch (err) {
        throw storeUnavailable(controller.signal.aborted ? controller.signal.reason : err) ?? err;
      } finally {
        clearTimeout(timer);
        deadline?.removeEventListener('abort', onDeadline);
        controller.signal.removeEventListener('abort', onAbort);
        aborted.catch(() => undefined);
      }
    },
    { step: 'initialize', priority: 'high', name: 'storeAvailability' },
  );
}
