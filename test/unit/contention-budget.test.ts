import { newContext } from '#shared/context.ts';
import { describe, expect, it, vi } from 'vitest';
import { idsAtPositions } from '#db/core/sequence.ts';
import { requestBudgetMs, GATEWAY_BUDGET_MS } from '#http/instrument.ts';
import { UNBOUNDED, withDeadline } from '#domain/time.ts';
import {
  roundBudgetRefusal,
  attemptUntilWon,
  busy,
  done,
  outOfTime,
  retryOnStale,
  ROUND_MARGIN_MS,
  RoundClock,
  stale,
} from '#app/contention.ts';
import type { Refused } from '#domain/outcome.ts';
import { statusOf } from '#http/error-status.ts';

describe('ids at list positions, around the gaps of the product sequence', () => {
  it('is the plain range without gaps', () => {
    expect(idsAtPositions(9, 4, [])).toEqual([9, 10, 11, 12]);
  });

  it('skips gaps inside the page and shifts by the gaps before it', () => {
    expect(idsAtPositions(1, 5, [2, 4])).toEqual([1, 3, 5, 6, 7]);
    expect(idsAtPositions(3, 3, [1, 2])).toEqual([5, 6, 7]);
    expect(idsAtPositions(2, 2, [1, 2, 3, 6])).toEqual([5, 7]);
    expect(idsAtPositions(1, 2, [10])).toEqual([1, 2]);
  });

  it('numbers every id that is not a gap exactly once across pages', () => {
    const gaps = [3, 4, 9, 15, 16, 17, 30];
    const pages = Array.from({ length: 6 }, (_, p) => idsAtPositions(p * 5 + 1, 5, gaps)).flat();
    const expected = Array.from({ length: 37 }, (_, i) => i + 1)
      .filter((id) => !gaps.includes(id))
      .slice(0, 30);
    expect(pages).toEqual(expected);
  });
});

describe('request budget', () => {
  it('is the gateway budget, or the function time left less a margin when that is shorter', () => {
    expect(requestBudgetMs(undefined)).toBe(GATEWAY_BUDGET_MS);
    expect(requestBudgetMs({ getRemainingTimeInMillis: () => 29_000 })).toBe(GATEWAY_BUDGET_MS);
    expect(requestBudgetMs({ getRemainingTimeInMillis: () => 10_000 })).toBe(9_500);
    expect(requestBudgetMs({ getRemainingTimeInMillis: () => 100 })).toBe(0);
  });

  it('refuses a contended write retryably before a round the budget cannot hold, having run no such round', async () => {
    let rounds = 0;
    const attempt = retryOnStale<number, string>({
      budget: withDeadline(UNBOUNDED, ROUND_MARGIN_MS + 1_000),
      what: 'the product x',
      read: async () => 1,
      round: async () => {
        rounds++;
        await new Promise((r) => setTimeout(r, 200));
        return stale();
      },
    });
    const refusal = await attempt;
    // It lost its rounds to other writers: the tenant's contention (429), not the platform's
    // fault, and returned as the caller's outcome, not thrown.
    expect(refusal).toMatchObject({ kind: 'refused', code: 'resource_busy', retryAfterSeconds: 1 });
    expect(statusOf((refusal as Refused).code)).toBe(429);
    // Rounds (200 ms each at least) started only while more than ROUND_MARGIN_MS was left: within the 1 s above it.
    expect(rounds).toBeGreaterThanOrEqual(1);
    expect(rounds).toBeLessThanOrEqual(5);
  });

  it('refuses at once, with the 503 of a request out of time, when too little is left to start, and finishes normally with time to spare', async () => {
    let rounds = 0;
    const round = async () => {
      rounds++;
      return done('ok');
    };
    await expect(
      retryOnStale({ budget: withDeadline(UNBOUNDED, ROUND_MARGIN_MS - 1), what: 'x', read: async () => 1, round }),
    ).rejects.toMatchObject({ code: 'service_unavailable', retryAfterSeconds: 1 });
    expect(rounds).toBe(0);
    await expect(
      retryOnStale({ budget: withDeadline(UNBOUNDED, 10_000), what: 'x', read: async () => 1, round }),
    ).resolves.toBe('ok');
  });

  it('bounds rounds by count only outside a budget, still with a retryable refusal', async () => {
    const refusal = await retryOnStale({
      budget: UNBOUNDED,
      what: 'x',
      read: async () => 1,
      round: async () => stale(1),
      maxAttempts: 3,
    });
    expect(refusal).toMatchObject({ kind: 'refused', code: 'resource_busy', retryAfterSeconds: 1 });
  });
});

describe('the round clock of a request', () => {
  it("is shared by every write of one request context: a later write starts no round the request's slowest would not fit", async () => {
    // Twice the round above the margin: whatever a loaded machine adds to the round, up to 600 ms,
    // the time left stays above the margin and below the margin plus the round.
    const ctx = withDeadline(newContext(), ROUND_MARGIN_MS + 1_200);
    const first = new RoundClock(ctx);
    await first.time(() => new Promise((r) => setTimeout(r, 600)));
    // A second write of the same request (a batch's next item) knows the 600 ms round: with at
    // most ROUND_MARGIN_MS + 600 left, its next round cannot fit, though a clock of its own would
    // start it.
    const next = new RoundClock(ctx);
    expect(next.slowestMs).toBeGreaterThanOrEqual(590);
    expect(next.canStart()).toBe(false);
    expect(new RoundClock({ deadline: ctx.deadline, signal: ctx.signal }).canStart()).toBe(true);
    // Another request's context starts from nothing.
    expect(new RoundClock(newContext()).slowestMs).toBe(0);
  });

  it('lets a write refuse cleanly when the request has already timed a round too slow for what is left', async () => {
    const ctx = withDeadline(newContext(), ROUND_MARGIN_MS + 300);
    ctx.rounds.slowestMs = 1_000;
    let rounds = 0;
    const outcome = await retryOnStale({
      budget: ctx,
      what: 'product 3 of store s',
      initial: 1,
      read: async () => 1,
      round: async () => (rounds++, done('written')),
    }).catch((e: unknown) => e);
    // Nothing lost yet, so the platform's 503 (thrown, a fault), and no round started.
    expect(outcome).toMatchObject({ code: 'service_unavailable' });
    expect(rounds).toBe(0);
  });
});

describe('the refusal of a contended write', () => {
  it('is 429 resource_busy with Retry-After once a round was lost, and 503 service_unavailable before any was', () => {
    const refusal = busy('product 1 of store s');
    expect(refusal).toMatchObject({ kind: 'refused', code: 'resource_busy', retryAfterSeconds: 1, field: null });
    expect(statusOf(refusal.code)).toBe(429);
    const late = outOfTime('product 1 of store s');
    expect(late).toMatchObject({ code: 'service_unavailable', retryAfterSeconds: 1, field: null });
    expect(statusOf(late.code)).toBe(503);
    // Outside a budget every round can start: neither is thrown.
    expect(roundBudgetRefusal(UNBOUNDED, 'x', true)).toBeUndefined();
  });

  it('refuses a round the budget cannot hold with resource_busy after a lost round, service_unavailable before any', async () => {
    const refusal = (lost: boolean) =>
      (async () => roundBudgetRefusal(withDeadline(UNBOUNDED, ROUND_MARGIN_MS - 1), 'the page p', lost))().catch(
        (e: unknown) => e,
      );
    expect(await refusal(true)).toMatchObject({ code: 'resource_busy' });
    expect(await refusal(false)).toMatchObject({ code: 'service_unavailable' });
  });
});

describe('a write whose answer never came', () => {
  type Sent = { kind: 'inserted' } | { kind: 'lost' } | { kind: 'unanswered' };

  it('is settled with its own token when no further attempt may start, never answered out_of_time', async () => {
    // The first send lands but its answer is lost (a store call abandoned at its budget); by the
    // time the next attempt could start, the ids' usable time is over. The clock is the test's, so
    // a slow machine cannot spend `until` before the first attempt.
    const tokens: string[] = [];
    let landed = false;
    const start = Date.now();
    const until = start + 100;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => (landed ? until + 50 : start));
    const ctx = newContext();
    const outcome = await attemptUntilWon(ctx, new RoundClock(ctx), until, async (_ctx, token): Promise<Sent> => {
      tokens.push(token);
      if (landed) return { kind: 'inserted' };
      landed = true;
      return { kind: 'unanswered' };
    }).finally(() => clock.mockRestore());
    // out_of_time would say nothing was written, and its ids would be closed as gaps under a product.
    expect(outcome).toEqual({ kind: 'inserted' });
    expect(tokens).toHaveLength(2);
    expect(tokens[1]).toBe(tokens[0]);
  });

  it('is undetermined, not out_of_time, when every attempt went unanswered', async () => {
    const ctx = newContext();
    const outcome = await attemptUntilWon(
      ctx,
      new RoundClock(ctx),
      Number.POSITIVE_INFINITY,
      async (): Promise<Sent> => ({ kind: 'unanswered' }),
      2,
    );
    expect(outcome).toEqual({ kind: 'undetermined' });
  });

  it('takes a new token after a lost attempt and answers out_of_time once none may start, having written nothing', async () => {
    const tokens: string[] = [];
    const ctx = newContext();
    const outcome = await attemptUntilWon(
      ctx,
      new RoundClock(ctx),
      Number.POSITIVE_INFINITY,
      async (_ctx, token): Promise<Sent> => (tokens.push(token), { kind: 'lost' }),
      3,
    );
    expect(outcome).toEqual({ kind: 'out_of_time' });
    expect(new Set(tokens).size).toBe(3);
  });
});
