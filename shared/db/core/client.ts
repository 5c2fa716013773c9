import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config.ts';
import { awsClientBuilt, awsClientDropped } from '#shared/aws-clients.ts';
import type { DbStats, RequestContext } from '#shared/context.ts';
import { DomainError } from '#domain/errors.ts';
import { remainingMs } from '#domain/time.ts';

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
  // The SDK's logger middleware passes every command's input and output through its sensitive-data
  // filter (a walk of every attribute read) to hand them to the client's logger, even to the
  // default no-op one. Nothing here logs SDK calls: without it a 15-product BatchGetItem takes
  // ~12% less CPU.
  base.middlewareStack.remove('loggerMiddleware');
  countRoundTrips(base);
  // Announced like every AWS client the product builds: a host that instruments clients (Tracer in
  // the signer, the local stack's commit barrier) does it from outside (shared/aws-clients.ts).
  awsClientBuilt(base);
  const doc = DynamoDBDocumentClient.from(base, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
  return { base, doc };
}

let clients: ReturnType<typeof createClients> | undefined;

/**
 * Built once per process (a Lambda container or the local server) and reused. The product sends
 * through `send`, with its request context; the client itself is for tools that read and write
 * the table as it is (tests, the bench, the local stack's own bookkeeping).
 */
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

/** Creating or describing the table at start-up (a cold store) is not a request's read or write: its calls' budget. */
export const TABLE_COMMAND_BUDGET_MS = 60_000;

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

/** A command of the document client (or of the base client, which the document client also sends). */
type StoreCommand = { readonly input: object; resolveMiddleware(...args: never[]): unknown };
/** What a command answers: the output its middleware chain resolves to. */
type OutputOf<C> = C extends { resolveMiddleware(...args: never[]): (...args: never[]) => Promise<{ output: infer O }> }
  ? O
  : never;

/**
 * Sends one DynamoDB call for the work of `ctx` (shared/context.ts): the way the product reaches
 * the table. The call is counted in `ctx.stats` and runs within its budget (`sendWithin`).
 */
export function send<C extends StoreCommand>(
  ctx: RequestContext,
  command: C,
  callBudgetMs: number = config().dynamodbCallTimeoutMs,
): Promise<OutputOf<C>> {
  return sendWithin(db(), callBudgetMs, ctx, command);
}

/** Each call in flight's request context, by the call's own abort signal (which the SDK hands every middleware). */
const callContexts = new WeakMap<AbortSignal, RequestContext>();

/**
 * The request context a call in flight was sent with (`send`), for a middleware of the client:
 * the round-trip counter below, and whoever decorates the client from outside (the bench's
 * billing meter). Undefined for a call sent on the client directly.
 */
export function contextOfCall(context: object): RequestContext | undefined {
  // The SDK (smithy) keeps the call's options in a middleware's context (@smithy/types SMITHY_CONTEXT_KEY).
  const smithy = (context as { __smithy_context?: { abortSignal?: AbortSignal } }).__smithy_context;
  return callContexts.get(smithy?.abortSignal as AbortSignal);
}

/**
 * One call on `client`, the SDK's retries (maxAttempts) included, within `callBudgetMs` and what
 * is left of `ctx`'s budget, whichever ends first: the call's own signal, handed to the SDK with
 * the call, stops its retry loop and makes the HTTP handler destroy the socket of an attempt in
 * flight. A call that cannot start (the budget is spent) or does not end in time, and every
 * failure that says the store is not answering, is `service_unavailable` (`storeUnavailable`).
 */
export async function sendWithin<C extends StoreCommand>(
  client: DynamoDBDocumentClient | DynamoDBClient,
  callBudgetMs: number,
  ctx: RequestContext,
  command: C,
): Promise<OutputOf<C>> {
  const left = remainingMs(ctx);
  if (left <= 0) throw unavailable('the request ran out of time');
  const budget = Math.min(callBudgetMs, left);
  const controller = new AbortController();
  callContexts.set(controller.signal, ctx);
  const timer = setTimeout(() => controller.abort(new StoreCallTimeout(budget)), budget);
  const deadline = ctx.signal;
  const onDeadline = () => controller.abort(deadline?.reason);
  deadline?.addEventListener('abort', onDeadline, { once: true });
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(controller.signal.reason);
    controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const sent = (client as DynamoDBDocumentClient).send(command as never, { abortSignal: controller.signal });
    return (await Promise.race([sent, aborted])) as OutputOf<C>;
  } catch (err) {
    throw storeUnavailable(controller.signal.aborted ? controller.signal.reason : err) ?? err;
  } finally {
    clearTimeout(timer);
    deadline?.removeEventListener('abort', onDeadline);
    controller.signal.removeEventListener('abort', onAbort);
    aborted.catch(() => undefined);
  }
}

/**
 * Counts each call sent with a request context (`send`) in that context's stats: its round trip,
 * its operation and the capacity it consumed. Outermost but for nothing: once per call, the SDK's
 * retries inside it.
 */
export function countRoundTrips(client: DynamoDBClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const stats = contextOfCall(context)?.stats;
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
}
