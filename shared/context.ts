import { withLogFields, type InvocationContext } from './log.ts';

/**
 * The request context: made once at the edge of each piece of work (an HTTP request, an MCP tool
 * call, an OAuth request, an admin command, a stream or queue batch) and passed down as the first
 * parameter of every use case (shared/app) and repository (shared/db). What a function depends on
 * is in its signature: nothing below the edge reads the request from the background.
 *
 * - `deadline` and `signal`: the time budget (shared/domain/time.ts, `Budget`). Anything that
 *   waits or retries asks how much is left (`remainingMs(ctx)`), and every DynamoDB call is
 *   abandoned when the signal aborts. Unbounded (Infinity, no signal) for work without a budget:
 *   the admin CLI, a script, a test calling a repository.
 * - `stats`: the DynamoDB round trips and capacity units the work has spent; every call made with
 *   this context is counted here (shared/db/core/client.ts, `send`), and the request's log line
 *   prints them.
 * - `dryRun`: a dry run (docs/api.md#dry-runs): the use case reads and decides as for the real
 *   write, answers what it would have written, and writes nothing.
 * - `log`: the fields every log line and metric of the work carries (shared/log.ts); the edge
 *   enters the logger's scope with this very object, and fills in the key and store once known.
 */
export interface RequestContext {
  /** Epoch ms by which the work must have answered; Infinity when it has no budget. */
  readonly deadline: number;
  /** Aborts when the deadline passes (reason: DeadlineExceeded); undefined when unbounded. */
  readonly signal: AbortSignal | undefined;
  readonly stats: DbStats;
  readonly dryRun: boolean;
  readonly log: InvocationContext;
}

/**
 * Round trips and capacity units of the work's DynamoDB calls, so that the cost of each endpoint
 * is visible in every request log line and in the benchmark, not guessed.
 */
export interface DbStats {
  calls: number;
  rcu: number;
  wcu: number;
  /** The operation of each call, in order (`GetItem`, `TransactWriteItems`, ...). */
  ops: string[];
}

export const noDbStats = (): DbStats => ({ calls: 0, rcu: 0, wcu: 0, ops: [] });

/**
 * A context without a budget, counting from zero, writing for real. An edge with a budget narrows
 * it with `withDeadline(newContext(...), ms)` (shared/domain/time.ts).
 */
export function newContext(log: Partial<InvocationContext> = {}): RequestContext {
  return {
    deadline: Number.POSITIVE_INFINITY,
    signal: undefined,
    stats: noDbStats(),
    dryRun: false,
    log: { request_id: null, function_name: null, cold_start: null, key_id: null, store_id: null, ...log },
  };
}

/** The same work as a dry run: the same budget, counts and log fields; the use case writes nothing. */
export const asDryRun = (ctx: RequestContext): RequestContext => ({ ...ctx, dryRun: true });

/** Told of each invocation's request context once it has answered (`onInvocationEnd`). */
type InvocationHook = (ctx: RequestContext) => void;
const invocationHooks: InvocationHook[] = [];

/**
 * Whoever measures invocations from outside hears of each one when it has answered, with its
 * request context (its DynamoDB counts, its request id): the local gateway adds up the
 * authorizer's and the handler's counts for the request's log line (emulation/local/gateway.ts),
 * a test its own. Returns the function that stops it. Each edge calls `invocationEnded`.
 */
export function onInvocationEnd(hook: InvocationHook): () => void {
  invocationHooks.push(hook);
  return () => {
    const at = invocationHooks.indexOf(hook);
    if (at >= 0) invocationHooks.splice(at, 1);
  };
}

/** Called by an edge once its invocation has answered (or failed). */
export function invocationEnded(ctx: RequestContext): void {
  for (const hook of invocationHooks) hook(ctx);
}

/**
 * Runs an edge's work with its context `ctx`: every log line of it carries `ctx.log`, and once it
 * has answered (or failed) those who listen hear of it (`onInvocationEnd`).
 */
export async function runInvocation<T>(ctx: RequestContext, fn: (ctx: RequestContext) => Promise<T>): Promise<T> {
  try {
    return await withLogFields(ctx.log, () => fn(ctx));
  } finally {
    invocationEnded(ctx);
  }
}
