import { AsyncLocalStorage } from 'node:async_hooks';
import { setMaxListeners } from 'node:events';
import { DomainError } from './errors.ts';
import { refused, type Refused } from './outcome.ts';

/**
 * Time in the domain, three parts: the time budget of the work in progress (below), the clock
 * that stamps `updated_at` (`nextUpdatedAt`), and optimistic retries bounded by the budget
 * (`retryOnStale`).
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

/**
 * Optimistic concurrency, one way everywhere: read → decide → commit guarded on what was read;
 * a commit that lost to another writer decides again from the state that writer left.
 *
 * Contention is bounded by the request's time budget (above): a round starts only while enough
 * of the budget is left to finish it, so a write that keeps losing is refused (429
 * `resource_busy`, `Retry-After`) before anyone stops listening, with nothing written, and
 * never goes on in the background after its answer. A single product write is bounded far
 * sooner, by calls and time (`ContentionBound`). A write that lost no round but finds the budget
 * spent (a slow store, a request that ran long before it) is the platform's 503 instead
 * (`outOfTime`).
 */

/** What one round of `retryOnStale` ended with. */
export type Round<S, R> =
  /** Finished: the commit went through, or nothing needed writing. */
  | { done: R }
  /** Lost to a concurrent commit. With the state the commit failed on, the next round starts from it (after the bound's wait, if any); without, after a backoff and a fresh read. */
  | { stale: S | undefined };

export const done = <R>(value: R): { done: R } => ({ done: value });
export const stale = <S>(current?: S): { stale: S | undefined } => ({ stale: current });

/**
 * The part of a budget a write round (a read and a transaction, each well under a second even
 * on a loaded store) must find left to start; below it the write is refused instead.
 */
export const ROUND_MARGIN_MS = 2_000;

/** Seconds a refused write is told to wait: contention on one item passes within moments. */
export const CONTENDED_RETRY_AFTER_S = 1;

/**
 * The retryable refusal of a write that kept losing to other writers of the same record: nothing
 * was written. A 429, not a 503: the tenant's own writers of one record cause it, the platform is
 * fine, and a 5xx would count in the operator's Api5xxRate alarm (docs/catalog-writes.md, "One
 * hot product").
 */
export const busy = (what: string): Refused =>
  refused(
    'resource_busy',
    `${what} is being changed by other writes right now; nothing was written. Retry after ${CONTENDED_RETRY_AFTER_S} s.`,
    null,
    CONTENDED_RETRY_AFTER_S,
  );

/** `busy` thrown, for the writes that still refuse by exception (product writes, stock, orders). */
export const contended = (what: string) => {
  const outcome = busy(what);
  return new DomainError(outcome.code, outcome.message, outcome.field, outcome.retryAfterSeconds);
};

/**
 * The retryable refusal of a write whose request's budget cannot hold its next round although it
 * lost none (a slow store, a request that ran long before the write): the platform's fault, so
 * the 503, and nothing was written.
 */
export const outOfTime = (what: string) =>
  new DomainError(
    'service_unavailable',
    `The request ran out of time before ${what} could be written; nothing was written. Retry after ${CONTENDED_RETRY_AFTER_S} s.`,
    null,
    CONTENDED_RETRY_AFTER_S,
  );

/**
 * The answer for a write the store neither confirmed nor refused in time (docs/catalog-writes.md,
 * "Time budget"): it may have landed. Retrying is safe, since the write is keyed by its external id.
 */
export const undetermined = (what: string) =>
  new DomainError(
    'service_unavailable',
    `The data store did not confirm in time whether ${what} was written; it may have been. Retrying is safe: the write is keyed by its external id. Retry after ${CONTENDED_RETRY_AFTER_S} s.`,
    null,
    CONTENDED_RETRY_AFTER_S,
  );

/**
 * Throws when the budget left cannot hold one more round: `contended(what)` once the write has
 * lost a round to another writer (`lost`), `outOfTime(what)` before it has.
 */
export function assertRoundBudget(what: string, lost: boolean, clock?: RoundClock): void {
  if (!(clock ?? defaultClock).canStart()) throw lost ? contended(what) : outOfTime(what);
}

/**
 * What a round needs left to start: ROUND_MARGIN_MS beyond the slowest round this work has timed
 * (a loaded store must not push a round past the answer).
 */
export class RoundClock {
  private slowest = 0;

  /** The slowest round timed so far (0 before the first). */
  get slowestMs(): number {
    return this.slowest;
  }

  canStart(): boolean {
    return remainingMs() >= ROUND_MARGIN_MS + this.slowest;
  }

  async time<T>(round: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await round();
    } finally {
      this.slowest = Math.max(this.slowest, performance.now() - started);
    }
  }
}

const defaultClock = new RoundClock();

/** Jittered, growing wait between contended rounds: 5–25 ms at first, at most ~205 ms; never past the budget's margin. */
export function backoff(attempt: number): Promise<void> {
  return sleepWithinBudget(5 + Math.random() * 20 * Math.min(Math.max(attempt, 1), 10));
}

/** Waits `ms`, but never into the budget's margin. */
function sleepWithinBudget(ms: number): Promise<void> {
  const wait = Math.min(ms, Math.max(0, remainingMs() - ROUND_MARGIN_MS));
  return new Promise((resolve) => setTimeout(resolve, wait));
}

/**
 * How far a write contended on one item may go before it is refused with the retryable
 * `contended` 429: at most `calls` store calls (its rounds' commits, and its reads of the item;
 * the one offer id a product without a variant reserves is not counted), and no round that would
 * start `ms` or more after its first one (docs/catalog-writes.md, "One hot
 * product"). A writer that keeps losing is answered within moments and sends again after
 * Retry-After, instead of spending its request's budget queueing on one item.
 */
export interface ContentionBound {
  readonly calls: number;
  readonly ms: number;
}

/**
 * A single product write's bound: with the authorizer's call and the write's read of its
 * targets, about 10 calls a request, and refused within about 2 s of contention.
 */
export const HOT_ITEM_BOUND: ContentionBound = { calls: 8, ms: 2_000 };

/** No bound beyond the request's budget: a batch item (its request may have run long before the item's turn). */
export const BUDGET_ONLY: ContentionBound = { calls: Number.POSITIVE_INFINITY, ms: Number.POSITIVE_INFINITY };

/** Whether a write may start its next round, having made `calls` calls by then, `ms` after its first round started. */
export const withinBound = (bound: ContentionBound, calls: number, ms: number): boolean =>
  calls <= bound.calls && ms < bound.ms;

/** The longest wait between two rounds of a bounded write. */
export const JITTER_CAP_MS = 1_000;

/**
 * "Full jitter" (AWS Architecture Blog, "Exponential Backoff and Jitter"): a wait drawn evenly
 * from 0 to `roundMs` × 2^attempt, at most JITTER_CAP_MS. `roundMs` is the slowest round so far
 * (at least 10 ms): a commit's duration is the window in which racing writers collide, and
 * spreading the losers over a few such windows lets most of them commit in a few rounds.
 */
export function fullJitterMs(attempt: number, roundMs: number, random: () => number = Math.random): number {
  return random() * Math.min(JITTER_CAP_MS, Math.max(10, roundMs) * 2 ** Math.min(Math.max(attempt, 1), 10));
}

/**
 * Runs rounds until one is done. Each racing writer loses a round only to another writer's
 * commit, so N writers of one item need about N rounds each at worst. Within a budget the
 * budget bounds the rounds, and a `bound` (a single write of one product) far sooner; outside
 * one (scripts, direct calls) `maxAttempts` does. Either way the give-up is `contended(what)`,
 * retryable, raised before a round that was not started: every round either committed or wrote
 * nothing (a write the budget stops before it lost any round is `outOfTime(what)`). With a `bound`, a lost round waits a full-jitter backoff before the next; without,
 * only a round lost without the state (a read follows) waits (`backoff`).
 */
export async function retryOnStale<S, R>(options: {
  read: () => Promise<S>;
  round: (state: S) => Promise<Round<S, R>>;
  /** Names the record in the error raised when contention never ends. */
  what: string;
  maxAttempts?: number;
  /** The state to start from when the caller already read it. */
  initial?: S;
  bound?: ContentionBound;
}): Promise<R> {
  const maxAttempts = options.maxAttempts ?? 50;
  const { bound } = options;
  const clock = new RoundClock();
  const started = performance.now();
  // The store calls made so far: each read and each round's commit.
  let calls = 0;
  assertRoundBudget(options.what, false, clock);
  let state = 'initial' in options ? (options.initial as S) : (calls++, await options.read());
  for (let attempt = 1; ; attempt++) {
    assertRoundBudget(options.what, attempt > 1, clock);
    const outcome = await clock.time(() => options.round(state));
    calls++;
    if ('done' in outcome) return outcome.done;
    if (attempt >= maxAttempts && remainingMs() === Number.POSITIVE_INFINITY) throw contended(options.what);
    const handedBack = outcome.stale !== undefined;
    if (bound) {
      const wait = fullJitterMs(attempt, clock.slowestMs);
      const next = handedBack ? 1 : 2;
      if (!withinBound(bound, calls + next, performance.now() - started + wait)) throw contended(options.what);
      await sleepWithinBudget(wait);
    } else if (!handedBack) await backoff(attempt);
    if (handedBack) {
      state = outcome.stale as S;
    } else {
      assertRoundBudget(options.what, true, clock);
      state = await options.read();
      calls++;
    }
  }
}
