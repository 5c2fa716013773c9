import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';

/**
 * Time in the domain, two parts: the time budget of the work in progress (below) and the clock
 * that stamps `updated_at` (`nextUpdatedAt`). How a write that meets contention spends the budget
 * (rounds, waits, refusals) is the use case's: shared/app/contention.ts.
 *
 * The time budget of the work in progress (one HTTP request, one tool call, one queue message).
 *
 * A front starts the budget with `withDeadline` from what it knows (API Gateway answers a request
 * after 29 s whatever the Lambda does; the function has its own timeout), keeping a margin to
 * answer in. Anything below it that waits or retries asks how much is left (`remainingMs`) and
 * stops in time with a retryable answer instead of running past the moment nobody listens; SDK
 * calls take `deadlineSignal()` so a call in flight is abandoned when the budget ends.
 *
 * Outside any budget (a script, a test calling a repository directly) nothing is bounded:
 * `remainingMs()` is Infinity and the signal is undefined.
 */
interface Budget {
  /** Epoch ms at which the work must have answered. */
  readonly deadline: number;
  readonly signal: AbortSignal;
}

const budgets = new AsyncLocalStorage<Budget>();

/** Raised (as the signal's reason) when a budget runs out. */
export class DeadlineExceeded extends Error {
  constructor(readonly budgetMs: number) {
    super(`the ${budgetMs} ms budget of this request ran out`);
    this.name = 'DeadlineExceeded';
  }
}

/**
 * Runs `fn` with a budget of `ms` from now. A nested budget can only shorten the outer one: the
 * inner work never outlives what its caller can still wait for.
 */
export async function withDeadline<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const outer = budgets.getStore();
  const deadline = Math.min(Date.now() + ms, outer?.deadline ?? Number.POSITIVE_INFINITY);
  const controller = new AbortController();
  // Every store call of the work listens on this signal while it runs; a batch runs several at
  // once, past Node's leak warning at 10, and each call removes its listener when it ends.
  setMaxListeners(100, controller.signal);
  const budgetMs = Math.max(0, deadline - Date.now());
  const timer = setTimeout(() => controller.abort(new DeadlineExceeded(budgetMs)), budgetMs);
  timer.unref?.();
  const onOuterAbort = () => controller.abort(outer?.signal.reason);
  outer?.signal.addEventListener('abort', onOuterAbort, { once: true });
  try {
    return await budgets.run({ deadline, signal: controller.signal }, fn);
  } finally {
    clearTimeout(timer);
    outer?.signal.removeEventListener('abort', onOuterAbort);
  }
}

/**
 * Runs `fn` with a budget of its own, `ms` from now, even when the current one is spent: for the
 * one short write that completes what the work already committed (closing the id reservations a
 * request made, with the ids it did not use), which must not be skipped because the work ran long, nor turn
 * writes that landed into a failed answer. The request budget leaves room for it before API
 * Gateway's 29 s (shared/http/instrument.ts: 25 s, then the answer margin).
 */
export function withGrace<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  return budgets.exit(() => withDeadline(ms, fn));
}

/**
 * Milliseconds left in the current budget (never negative); Infinity outside any budget; 0 once
 * its signal has aborted. The abort comes from a timer, and Node runs timers against the event
 * loop's clock, read when the loop turned: on a busy process a timer fires a few milliseconds
 * before the wall-clock deadline, and work that saw its signal abort must not find time left.
 */
export function remainingMs(now: number = Date.now()): number {
  const budget = budgets.getStore();
  if (budget === undefined) return Number.POSITIVE_INFINITY;
  return budget.signal.aborted ? 0 : Math.max(0, budget.deadline - now);
}

/** Aborts when the current budget runs out; undefined outside any budget. */
export function deadlineSignal(): AbortSignal | undefined {
  return budgets.getStore()?.signal;
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
