import { afterEach, describe, expect, it, vi } from 'vitest';
import { UNBOUNDED, withDeadline } from '#domain/time.ts';
import {
  BUDGET_ONLY,
  done,
  fullJitterMs,
  HOT_ITEM_BOUND,
  JITTER_CAP_MS,
  retryLost,
  retryOnStale,
  stale,
  withinBound,
} from '#app/contention.ts';

/** The bound of a single write contended on one item (docs/catalog-writes.md, "One hot product"). */
describe('contention bound', () => {
  afterEach(() => vi.restoreAllMocks());

  it('allows a round while its calls stay within the bound and it starts before the bound ms', () => {
    const bound = { calls: 8, ms: 2_000 };
    expect(withinBound(bound, 8, 1_999)).toBe(true);
    expect(withinBound(bound, 9, 0)).toBe(false);
    expect(withinBound(bound, 1, 2_000)).toBe(false);
    expect(withinBound(BUDGET_ONLY, 1_000, 60_000)).toBe(true);
  });

  it('draws the full-jitter wait evenly from 0 to the slowest round × 2^attempt, capped', () => {
    expect(fullJitterMs(1, 30, () => 0)).toBe(0);
    expect(fullJitterMs(1, 30, () => 0.5)).toBe(30);
    expect(fullJitterMs(3, 30, () => 0.5)).toBe(120);
    // A round faster than 10 ms still spreads the writers over 10 ms windows.
    expect(fullJitterMs(2, 1, () => 0.5)).toBe(20);
    expect(fullJitterMs(20, 500, () => 0.999)).toBeLessThan(JITTER_CAP_MS);
    for (let i = 0; i < 1_000; i++) {
      const ms = fullJitterMs(4, 30);
      expect(ms).toBeGreaterThanOrEqual(0);
      expect(ms).toBeLessThan(480);
    }
  });

  it('refuses a write whose rounds keep losing once the next round would pass the calls, having made no more', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    let rounds = 0;
    const handedBack = retryOnStale<number, string>({
      budget: withDeadline(UNBOUNDED, 25_000),
      what: 'product 1',
      initial: 1,
      bound: { calls: 8, ms: 60_000 },
      read: async () => 1,
      round: async (n) => (rounds++, stale(n)),
    });
    expect(await handedBack).toMatchObject({ code: 'resource_busy', retryAfterSeconds: 1 });
    expect(rounds).toBe(8);

    // Lost without the state: each round after the first costs a read and a commit.
    let reads = 0;
    rounds = 0;
    const reread = await retryOnStale<number, string>({
      budget: withDeadline(UNBOUNDED, 25_000),
      what: 'product 1',
      initial: 1,
      bound: { calls: 8, ms: 60_000 },
      read: async () => (reads++, 1),
      round: async () => (rounds++, stale()),
    });
    expect(reread).toMatchObject({ kind: 'refused', code: 'resource_busy' });
    expect(rounds + reads).toBeLessThanOrEqual(8);
    expect({ rounds, reads }).toEqual({ rounds: 4, reads: 3 });
  });

  it('starts no round the bound ms after the first one started', async () => {
    let rounds = 0;
    const err = await retryOnStale<number, string>({
      budget: UNBOUNDED,
      what: 'product 1',
      initial: 1,
      bound: { calls: 100, ms: 50 },
      read: async () => 1,
      round: async (n) => {
        rounds++;
        await new Promise((r) => setTimeout(r, 60));
        return stale(n);
      },
    });
    expect(err).toMatchObject({ kind: 'refused', code: 'resource_busy' });
    expect(rounds).toBe(1);
  });

  it('returns the refusal of a write past its bound as a value, with nothing thrown, and a done round as it is', async () => {
    let rounds = 0;
    const refusal = await retryOnStale<number, string>({
      budget: UNBOUNDED,
      what: 'product 1 of store s',
      initial: 1,
      bound: { calls: 1, ms: 60_000 },
      read: async () => 1,
      round: async (n) => (rounds++, stale(n)),
    });
    expect(refusal).toEqual({
      kind: 'refused',
      code: 'resource_busy',
      message: 'product 1 of store s is being changed by other writes right now; nothing was written. Retry after 1 s.',
      field: null,
      retryAfterSeconds: 1,
    });
    expect(rounds).toBe(1);
    // Outside a budget, maxAttempts bounds the rounds: the same refusal, returned.
    expect(
      await retryOnStale({
        budget: UNBOUNDED,
        what: 'x',
        read: async () => 1,
        round: async () => stale(1),
        maxAttempts: 3,
      }),
    ).toMatchObject({ kind: 'refused', code: 'resource_busy' });
    await expect(
      retryOnStale({ budget: UNBOUNDED, what: 'x', read: async () => 1, round: async () => done('ok') }),
    ).resolves.toBe('ok');
  });

  it('returns the busy refusal of an attempt lost maxAttempts times (the admin key changes, the numbering)', async () => {
    let attempts = 0;
    const outcome = await retryLost(UNBOUNDED, 'key 7', 3, async () => (attempts++, { kind: 'lost' as const }));
    expect(outcome).toEqual({
      kind: 'refused',
      code: 'resource_busy',
      message: 'key 7 is being changed by other writes right now; nothing was written. Retry after 1 s.',
      field: null,
      retryAfterSeconds: 1,
    });
    expect(attempts).toBe(3);
    // An attempt that is not lost is the answer, on the first try.
    expect(await retryLost(UNBOUNDED, 'key 7', 3, async () => ({ kind: 'changed' as const }))).toEqual({
      kind: 'changed',
    });
  });

  it('applies a write that wins within the bound, and lets a budget-only write go past it', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    let rounds = 0;
    const third = (n: number) => (++rounds >= 3 ? done(`won at ${n}`) : stale(n + 1));
    await expect(
      retryOnStale({
        budget: UNBOUNDED,
        what: 'p',
        initial: 1,
        bound: HOT_ITEM_BOUND,
        read: async () => 1,
        round: async (n) => third(n),
      }),
    ).resolves.toBe('won at 3');

    rounds = 0;
    const twelfth = (n: number) => (++rounds >= 12 ? done(`won at ${n}`) : stale(n + 1));
    await expect(
      retryOnStale({
        budget: withDeadline(UNBOUNDED, 25_000),
        what: 'p',
        initial: 1,
        bound: BUDGET_ONLY,
        read: async () => 1,
        round: async (n) => twelfth(n),
      }),
    ).resolves.toBe('won at 12');
  });
});
