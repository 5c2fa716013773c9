import type { InvocationContext } from './log.ts';

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
 * - `rounds`: the slowest write round the work has timed (shared/app/contention.ts, `RoundClock`):
 *   every write of one request (a batch's items, an insert then the replace it fell back to)
 *   decides from it whether its next round still fits the budget.
 * - `dryRun`: a dry run (docs/api.md#dry-runs): the use case reads and decides as for the real
 *   write, answers what it would have written, and writes nothing.
 * - `log`: the fields every log line and metric of the work carries (shared/log.ts); the edge
 *   runs the work with this very object as its lines' fields (`withLogFields`), and whoever learns
 *   the key and store writes them on it.
 */
export interface RequestContext {
  /** Epoch ms by which the work must have answered; Infinity when it has no budget. */
  readonly deadline: number;
  /** Aborts when the deadline passes (reason: DeadlineExceeded); undefined when unbounded. */
  readonly signal: AbortSignal | undefined;
  readonly stats: DbStats;
  readonly rounds: RoundTimes;
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

/** What the work's write rounds have taken so far: the longest one, in ms (0 before the first). */
export interface RoundTimes {
  slowestMs: number;
}

/**
 * A context without a budget, counting from zero, writing for real. An edge with a budget narrows
 * it with `withDeadline(newContext(...), ms)` (shared/domain/time.ts).
 */
export function newContext(log: Partial<InvocationContext> = {}): RequestContext {
  return {
    deadline: Infinity,
    signal: undefined,
    stats: { calls: 0, rcu: 0, wcu: 0, ops: [] },
    rounds: { slowestMs: 0 },
    dryRun: false,
    log: { request_id: null, function_name: null, cold_start: null, key_id: null, store_id: null, ...log },
  };
}
