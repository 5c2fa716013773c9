import { setMaxListeners } from 'node:events';

/**
 * Time in the domain, two parts: the time budget of the work in progress (below) and the clock
 * that stamps `updated_at` (`nextUpdatedAt`). How a write that meets contention spends the budget
 * (rounds, waits, refusals) is the use case's: shared/app/contention.ts.
 *
 * The time budget of the work in progress (one HTTP request, one tool call, one queue message):
 * a deadline and the signal that aborts when it passes, carried by the request context
 * (shared/context.ts) and passed down with it.
 *
 * A front starts the budget with `withDeadline` from what it knows (API Gateway answers a request
 * after 29 s whatever the Lambda does; the function has its own timeout), keeping a margin to
 * answer in. Anything below it that waits or retries asks how much is left (`remainingMs`) and
 * stops in time with a retryable answer instead of running past the moment nobody listens; every
 * store call listens on the signal, so a call in flight is abandoned when the budget ends.
 *
 * Work without a budget (a script, the admin CLI, a test calling a repository directly) is
 * `UNBOUNDED`: `remainingMs` is Infinity and there is no signal.
 */
export interface Budget {
  /** Epoch ms at which the work must have answered; Infinity when unbounded. */
  readonly deadline: number;
  /** Aborts when the budget runs out (reason: DeadlineExceeded); undefined when unbounded. */
  readonly signal: AbortSignal | undefined;
}

export const UNBOUNDED: Budget = { deadline: Infinity, signal: undefined };

/** Raised (as the signal's reason) when a budget runs out. */
export class DeadlineExceeded extends Error {
  constructor(readonly budgetMs: number) {
    super(`the ${budgetMs} ms budget of this request ran out`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * `outer` narrowed to a budget of `ms` from now (a request context keeps its other fields): it
 * can only shorten the outer one, so the inner work never outlives what its caller can still wait
 * for, and its signal aborts when the outer one does. The timer that aborts it does not keep the
 * process alive, and needs no clearing: a budget whose work has ended aborts with nothing left
 * listening.
 */
export function withDeadline<B extends Budget>(outer: B, ms: number): B {
  const deadline = Math.min(Date.now() + ms, outer.deadline);
  const controller = new AbortController();
  // Every store call of the work listens on this signal while it runs; a batch runs several at
  // once, past Node's leak warning at 10, and each call removes its listener when it ends.
  setMaxListeners(100, controller.signal);
  const budgetMs = Math.max(0, deadline - Date.now());
  setTimeout(() => controller.abort(new DeadlineExceeded(budgetMs)), budgetMs).unref?.();
  const { signal } = controller;
  if (outer.signal?.aborted) controller.abort(outer.signal.reason);
  else outer.signal?.addEventListener('abort', () => controller.abort(outer.signal?.reason), { once: true, signal });
  return { ...outer, deadline, signal };
}

/**
 * A budget of its own, `ms` from now, even when `outer`'s is spent: for the one short write that
 * completes what the work already committed (closing the id reservations a request made, with the
 * ids it did not use; finding out what an unanswered write did), which must not be skipped because
 * the work ran long, nor turn writes that landed into a failed answer. The request budget leaves
 * room for it before API Gateway's 29 s (shared/http/instrument.ts: 25 s, then the answer margin).
 */
export function withGrace<B extends Budget>(outer: B, ms: number): B {
  return withDeadline({ ...outer, ...UNBOUNDED }, ms);
}

/**
 * Milliseconds left in `budget` (never negative); Infinity when unbounded; 0 once its signal has
 * aborted. The abort comes from a timer, and Node runs timers against the event loop's clock,
 * read when the loop turned: on a busy process a timer fires a few milliseconds before the
 * wall-clock deadline, and work that saw its signal abort must not find time left.
 */
export function remainingMs(budget: Budget, now: number = Date.now()): number {
  if (budget.signal?.aborted) return 0;
  return Math.max(0, budget.deadline - now);
}

/**
 * `updated_at` never goes back and never repeats, even when this machine's clock is behind the
 * last writer's: writes are guarded on the updated_at they read, and the "updated since" index
 * and every client's sync cursor depend on its order. A slow clock writes previous + 1 ms.
 */
export function nextUpdatedAt(previous: string | undefined, nowMs: number = Date.now()): string {
  const prev = previous === undefined ? Number.NaN : Date.parse(previous);
  return new Date(Number.isNaN(prev) ? nowMs : Math.max(nowMs, prev + 1)).toISOString();
}

export const nowIso = (): string => new Date().toISOString();
