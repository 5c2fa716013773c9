/**
 * Optimistic concurrency, one way everywhere: read → decide → commit guarded on what was read;
 * a commit that lost to another writer decides again from the state that writer left.
 */

/** What one round of `retryOnStale` ended with. */
export type Round<S, R> =
  /** Finished: the commit went through, or nothing needed writing. */
  | { done: R }
  /** Lost to a concurrent commit. With the state the commit failed on, the next round starts from it at once; without, after a backoff and a fresh read. */
  | { stale: S | undefined };

export const done = <R>(value: R): { done: R } => ({ done: value });
export const stale = <S>(current?: S): { stale: S | undefined } => ({ stale: current });

/** Jittered, growing wait between contended rounds: 5–25 ms at first, at most ~205 ms. */
export function backoff(attempt: number): Promise<void> {
  const ms = 5 + Math.random() * 20 * Math.min(Math.max(attempt, 1), 10);
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs rounds until one is done. Each racing writer loses a round only to another writer's
 * commit, so `maxAttempts` bounds pathological contention, not normal traffic.
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
  let state = 'initial' in options ? (options.initial as S) : await options.read();
  for (let attempt = 1; ; attempt++) {
    const outcome = await options.round(state);
    if ('done' in outcome) return outcome.done;
    if (attempt >= maxAttempts) throw new Error(`${options.what}: still contended after ${attempt} attempts`);
    if (outcome.stale !== undefined) {
      state = outcome.stale;
    } else {
      await backoff(attempt);
      state = await options.read();
    }
  }
}
