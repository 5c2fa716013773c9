import { randomUUID } from 'node:crypto';
import { DomainError } from '#domain/errors.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { type Budget, remainingMs, withGrace } from '#domain/time.ts';
import type { RequestContext, RoundTimes } from '#shared/context.ts';

/**
 * Contention, in one home. A repository makes one attempt and answers what the store said
 * (committed, stale, lost, unanswered); the use case decides here whether to go round again,
 * settle or refuse. Nothing in shared/db or shared/domain loops on a conflict
 * (test/unit/pipeline-ratchets.test.ts holds it so).
 *
 * Optimistic concurrency, one way everywhere: read → decide → commit guarded on what was read;
 * a commit that lost to another writer decides again from the state that writer left
 * (`retryOnStale`). Contention is bounded by the request's time budget (shared/domain/time.ts): a
 * round starts only while enough of the budget is left to finish it, so a write that keeps losing
 * is refused (429 `resource_busy`, `Retry-After`) before anyone stops listening, with nothing
 * written, and never goes on in the background after its answer. A single product write is
 * bounded far sooner, by calls and time (`ContentionBound`). A write that lost no round but finds
 * the budget spent (a slow store, a request that ran long before it) is the platform's 503
 * instead (`outOfTime`). A write whose answer never came is sent again with its request token
 * until the store says what it did (`settle`).
 */

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
    retryLater(`${what} is being changed by other writes right now; nothing was written.`),
    null,
    CONTENDED_RETRY_AFTER_S,
  );

/** A refusal's text with when to try again, said the same way by every refusal here. */
function retryLater(text: string): string {
  return `${text} Retry after ${CONTENDED_RETRY_AFTER_S} s.`;
}

/** A retryable 503 of a write: the platform's fault, told to try again after a moment. */
const unavailable = (text: string) =>
  new DomainError('service_unavailable', retryLater(text), null, CONTENDED_RETRY_AFTER_S);

/**
 * The retryable refusal of a write whose request's budget cannot hold its next round although it
 * lost none (a slow store, a request that ran long before the write): the platform's fault, so
 * the 503, and nothing was written.
 */
export const outOfTime = (what: string) =>
  unavailable(`The request ran out of time before ${what} could be written; nothing was written.`);

/**
 * The answer for a write the store neither confirmed nor refused in time (docs/catalog-writes.md,
 * "Time budget"): it may have landed. Retrying is safe, since the write is keyed by its external id.
 */
export const undetermined = (what: string) =>
  unavailable(
    `The data store did not confirm in time whether ${what} was written; it may have been. Retrying is safe: the write is keyed by its external id.`,
  );

/**
 * What a round needs left to start: ROUND_MARGIN_MS beyond the slowest round this work has timed
 * (a loaded store must not push a round past the answer). Every clock made on one request
 * context shares that context's record (`ctx.rounds`), so a batch's later items, and a write that
 * falls back from insert to replace, start a round only if the request's slowest round so far
 * still fits; a bare budget (a script, a test) gets a record of its own.
 */
export class RoundClock {
  private readonly times: RoundTimes;

  constructor(readonly budget: Budget & { readonly rounds?: RoundTimes }) {
    this.times = budget.rounds ?? { slowestMs: 0 };
  }

  /** The slowest round timed so far (0 before the first). */
  get slowestMs(): number {
    return this.times.slowestMs;
  }

  canStart(): boolean {
    return remainingMs(this.budget) >= ROUND_MARGIN_MS + this.times.slowestMs;
  }

  async time<T>(round: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await round();
    } finally {
      this.times.slowestMs = Math.max(this.times.slowestMs, performance.now() - started);
    }
  }
}

/**
 * When the budget left cannot hold one more round: the refusal `busy(what)` once the write has
 * lost a round to another writer (`lost`); before it has, `outOfTime(what)` is thrown (a fault).
 */
export function roundBudgetRefusal(
  budget: Budget,
  what: string,
  lost: boolean,
  clock: RoundClock = new RoundClock(budget),
): Refused | undefined {
  if (clock.canStart()) return undefined;
  if (lost) return busy(what);
  throw outOfTime(what);
}

/** Jittered, growing wait between contended rounds: 5–25 ms at first, at most ~205 ms; never past the budget's margin. */
export function backoff(budget: Budget, attempt: number): Promise<void> {
  return sleepWithinBudget(budget, 5 + Math.random() * 20 * Math.min(Math.max(attempt, 1), 10));
}

/** Waits `ms`, but never into the budget's margin. */
function sleepWithinBudget(budget: Budget, ms: number): Promise<void> {
  const wait = Math.min(ms, Math.max(0, remainingMs(budget) - ROUND_MARGIN_MS));
  return new Promise((resolve) => setTimeout(resolve, wait));
}

/**
 * How far a write contended on one item may go before it is refused with the retryable
 * `resource_busy` 429 (`busy`): at most `calls` store calls (its rounds' commits, and its reads of the item;
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
export const BUDGET_ONLY: ContentionBound = { calls: Infinity, ms: Infinity };

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

/** What one round of `retryOnStale` ended with. */
export type Round<S, R> =
  /** Finished: the commit went through, or nothing needed writing. */
  | { done: R }
  /** Lost to a concurrent commit. With the state the commit failed on, the next round starts from it (after the bound's wait, if any); without, after a backoff and a fresh read. */
  | { stale: S | undefined };

export const done = <R>(value: R): { done: R } => ({ done: value });
export const stale = <S>(current?: S): { stale: S | undefined } => ({ stale: current });

/** What `retryOnStale` is told: how to read the state, run a round, and how far to go. */
export interface Rounds<S, R> {
  /** The work's budget (its request context): it bounds the rounds. */
  budget: Budget;
  read: () => Promise<S>;
  round: (state: S) => Promise<Round<S, R>>;
  /** Names the record in the refusal when contention never ends. */
  what: string;
  maxAttempts?: number;
  /** The state to start from when the caller already read it. */
  initial?: S;
  bound?: ContentionBound;
}

/**
 * Runs rounds until one is done. Each racing writer loses a round only to another writer's
 * commit, so N writers of one item need about N rounds each at worst. Within a budget the
 * budget bounds the rounds, and a `bound` (a single write of one product) far sooner; outside
 * one (scripts, the admin, the stream consumers) `maxAttempts` does. Either way the give-up is
 * the refusal `busy(what)`, returned, retryable, before a round that was not started: every round
 * either committed or wrote nothing (a write the budget stops before it lost any round throws
 * `outOfTime(what)`, a fault). With a `bound`, a lost round waits a full-jitter backoff before
 * the next; without, only a round lost without the state (a read follows) waits (`backoff`).
 */
export async function retryOnStale<S, R>(options: Rounds<S, R>): Promise<R | Refused> {
  const maxAttempts = options.maxAttempts ?? 50;
  const { budget, bound, what } = options;
  const clock = new RoundClock(budget);
  const started = performance.now();
  // The store calls made so far: each read and each round's commit.
  let calls = 0;
  // Whether `state` is what the next round decides from (else it reads first).
  let fresh = 'initial' in options;
  let state = options.initial as S;
  for (let attempt = 1; ; attempt++) {
    // No read and no round starts without the budget to finish it.
    if (!fresh) {
      const refusal = roundBudgetRefusal(budget, what, attempt > 1, clock);
      if (refusal) return refusal;
      state = await options.read();
      calls++;
    }
    const refusal = roundBudgetRefusal(budget, what, attempt > 1, clock);
    if (refusal) return refusal;
    const outcome = await clock.time(() => options.round(state));
    calls++;
    if ('done' in outcome) return outcome.done;
    if (attempt >= maxAttempts && remainingMs(budget) === Infinity) return busy(what);
    fresh = outcome.stale !== undefined;
    if (bound) {
      const wait = fullJitterMs(attempt, clock.slowestMs);
      if (!withinBound(bound, calls + (fresh ? 1 : 2), performance.now() - started + wait)) return busy(what);
      await sleepWithinBudget(budget, wait);
    } else if (!fresh) await backoff(budget, attempt);
    if (fresh) state = outcome.stale as S;
  }
}

/**
 * `retryOnStale` for an attempt that reads what it decides from itself and commits guarded on
 * it (`attempt`, one call of a repository): tried again, after a backoff, while it answers `lost`.
 * For work outside a request's budget (the admin's key changes, the stream consumers'
 * numbering), `maxAttempts` bounds it.
 */
export function retryLost<O extends { kind: string }>(
  budget: Budget,
  what: string,
  maxAttempts: number,
  attempt: () => Promise<O | Lost>,
): Promise<Exclude<O, Lost> | Refused> {
  return retryOnStale<undefined, Exclude<O, Lost>>({
    budget,
    what,
    maxAttempts,
    initial: undefined,
    read: async () => undefined,
    round: async () => {
      const outcome = await attempt();
      return outcome.kind === 'lost' ? stale() : done(outcome as Exclude<O, Lost>);
    },
  });
}

/** A write the store did not answer: abandoned at the end of the budget, or a store error. It may still land. */
export type Unanswered = { kind: 'unanswered' };
/** A write that lost to a concurrent one: nothing was written. */
export type Lost = { kind: 'lost' };
/** The budget cannot hold another attempt: nothing more was sent. */
export type OutOfTime = { kind: 'out_of_time' };
/** The store answered neither the write nor its re-sends in time: it may or may not have landed. */
export type Undetermined = { kind: 'undetermined' };

/**
 * Past the request's budget (shared/http/instrument.ts keeps 4 s before API Gateway's 29 s):
 * finding out what an unanswered write did.
 */
const SETTLE_GRACE_MS = 1_500;

/**
 * The outcome of a write whose answer never came, found by sending it again (`resend`: the same
 * items and request token) within a short budget of its own: a commit that landed answers
 * success (the token), or is refused by its own guard as any attempt is; one that did not land
 * commits now or is refused. Never a guess: what stays unknown is `undetermined`, and the
 * request says so instead of "nothing was written".
 */
export async function settle<O extends { kind: string }>(
  ctx: RequestContext,
  resend: (grace: RequestContext) => Promise<O>,
): Promise<Exclude<O, Unanswered> | Undetermined> {
  const grace = withGrace(ctx, SETTLE_GRACE_MS);
  for (let attempt = 1; remainingMs(grace) > 0; attempt++) {
    const outcome = await resend(grace);
    if (outcome.kind !== 'unanswered') return outcome as Exclude<O, Unanswered>;
    await backoff(grace, attempt);
  }
  return { kind: 'undetermined' };
}

/**
 * One attempt of a write that carries its request token (`send` sends the same items and token
 * each time): not started when the budget cannot hold a round, timed on `clock`, and settled when
 * its answer never came. `lost` is the caller's to handle (it decides from what moved).
 */
export async function attemptOnce<O extends { kind: string }>(
  ctx: RequestContext,
  clock: RoundClock,
  send: (ctx: RequestContext) => Promise<O>,
): Promise<Exclude<O, Unanswered> | OutOfTime | Undetermined> {
  if (!clock.canStart()) return { kind: 'out_of_time' };
  const outcome = await clock.time(() => send(ctx));
  return outcome.kind === 'unanswered' ? settle(ctx, send) : (outcome as Exclude<O, Unanswered>);
}

/**
 * Attempts of a write that nothing but a racing write of the same items can make lose (`lost`),
 * until one is not lost: a fresh token after a loss, the same after an attempt whose answer never
 * came (so a commit that landed answers success). No attempt starts at or after `until` (epoch
 * ms) or without the budget for a round; outside a budget (scripts) `maxAttempts` bounds them.
 * Then the answer is `out_of_time` (nothing was written) only if the last attempt was answered:
 * one whose answer never came may have landed, so it is settled instead, or the caller would
 * report nothing written (and a request close its ids as gaps) under a product that exists.
 * `lost` only when the settled attempt turns out to have lost.
 */
export async function attemptUntilWon<O extends { kind: string }>(
  ctx: RequestContext,
  clock: RoundClock,
  until: number,
  send: (ctx: RequestContext, token: string) => Promise<O>,
  maxAttempts = 50,
): Promise<Exclude<O, Unanswered> | OutOfTime | Undetermined> {
  let token = randomUUID();
  let unanswered = false;
  for (let attempt = 1; ; attempt++) {
    const spent = attempt > maxAttempts && remainingMs(ctx) === Infinity;
    if (!clock.canStart() || Date.now() >= until || spent)
      return unanswered ? settle(ctx, (grace) => send(grace, token)) : { kind: 'out_of_time' };
    const sent = token;
    const outcome = await clock.time(() => send(ctx, sent));
    if (outcome.kind !== 'lost' && outcome.kind !== 'unanswered') return outcome as Exclude<O, Unanswered>;
    unanswered = outcome.kind === 'unanswered';
    if (!unanswered) token = randomUUID();
    await backoff(ctx, attempt);
  }
}
