/**
 * Optimistic concurrency, one way everywhere: read → decide → commit guarded on what was read;
 * a commit that lost to another writer decides again from the state that writer left.
 *
 * Contention is bounded by the request's time budget (shared/domain/deadline.ts), not by a count
 * of rounds: a round starts only while enough of the budget is left to finish it, so a write
 * that keeps losing is refused (503 `service_unavailable`, `Retry-After`) before anyone stops
 * listening, with nothing written, and never goes on in the background after its answer.
 */
import { DomainError } from './errors.ts';
import { remainingMs } from './deadline.ts';

/** What one round of `retryOnStale` ended with. */
export type Round<S, R> =
  /** Finished: the commit went through, or nothing needed writing. */
  | { done: R }
  /** Lost to a concurrent commit. With the state the commit failed on, the next round starts from it at once; without, after a backoff and a fresh read. */
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

/** The retryable refusal of a write that ran out of budget while contended: nothing was written. */
export const contended = (what: string) =>
  new DomainError(
    'service_unavailable',
    `${what} is being changed by other writes right now; nothing was written. Retry after ${CONTENDED_RETRY_AFTER_S} s.`,
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

/** Throws `contended(what)` when the budget left cannot hold one more round. */
export function assertRoundBudget(what: string, clock?: RoundClock): void {
  if (!(clock ?? defaultClock).canStart()) throw contended(what);
}

/**
 * What a round needs left to start: ROUND_MARGIN_MS beyond the slowest round this work has timed
 * (a loaded store must not push a round past the answer).
 */
export class RoundClock {
  private slowest = 0;

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
  const ms = Math.min(
    5 + Math.random() * 20 * Math.min(Math.max(attempt, 1), 10),
    Math.max(0, remainingMs() - ROUND_MARGIN_MS),
  );
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs rounds until one is done. Each racing writer loses a round only to another writer's
 * commit, so N writers of one item need about N rounds each at worst. Within a budget the
 * budget alone bounds the rounds; outside one (scripts, direct calls) `maxAttempts` does.
 * Either way the give-up is `contended(what)`, retryable, raised before a round that was not
 * started: every round either committed or wrote nothing.
 */
export async function retryOnStale<S, R>(options: {
  read: () => Promise<S>;
  round: (state: S) => Promise<Round<S, R>>;
  /** Names the record in the error raised when contention never ends. */
  what: string;
  maxAttempts?: number;
  /** The state to start from when the caller already read it. */
  initial?: S;
}): Promise<R> {
  const maxAttempts = options.maxAttempts ?? 50;
  const clock = new RoundClock();
  assertRoundBudget(options.what, clock);
  let state = 'initial' in options ? (options.initial as S) : await options.read();
  for (let attempt = 1; ; attempt++) {
    assertRoundBudget(options.what, clock);
    const outcome = await clock.time(() => options.round(state));
    if ('done' in outcome) return outcome.done;
    if (attempt >= maxAttempts && remainingMs() === Number.POSITIVE_INFINITY) throw contended(options.what);
    if (outcome.stale !== undefined) {
      state = outcome.stale;
    } else {
      await backoff(attempt);
      assertRoundBudget(options.what, clock);
      state = await options.read();
    }
  }
}
