import { describe, expect, it, vi } from 'vitest';
import { DeadlineExceeded, remainingMs, UNBOUNDED, withDeadline, withGrace } from '#domain/time.ts';

describe('request deadline', () => {
  it('is unbounded outside any budget', () => {
    expect(remainingMs(UNBOUNDED)).toBe(Number.POSITIVE_INFINITY);
    expect(UNBOUNDED.signal).toBeUndefined();
  });

  it('tells the work how much of its budget is left, measured from a given instant', () => {
    const budget = withDeadline(UNBOUNDED, 10_000);
    const now = Date.now();
    const left = remainingMs(budget, now);
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(10_000);
    expect(remainingMs(budget, now + left + 5)).toBe(0);
  });

  it('lets a nested budget shorten the outer one, never lengthen it', () => {
    const outer = withDeadline(UNBOUNDED, 1_000);
    const left = remainingMs(outer);
    expect(remainingMs(withDeadline(outer, 60_000))).toBeLessThanOrEqual(left);
    expect(remainingMs(withDeadline(outer, 10))).toBeLessThanOrEqual(10);
  });

  it('gives the closing write a budget of its own once the work has spent its budget', async () => {
    const work = withDeadline(UNBOUNDED, 1);
    const spent = work.signal!;
    if (!spent.aborted) await new Promise((resolve) => spent.addEventListener('abort', resolve, { once: true }));
    expect(remainingMs(work)).toBe(0);
    const grace = withGrace(work, 60_000);
    expect(remainingMs(grace)).toBeGreaterThan(1);
    expect(grace.signal?.aborted).toBe(false);
    // Only the grace budget has time: the spent budget is still the work's.
    expect(remainingMs(work)).toBe(0);
  });

  it('has no time left once its signal has aborted, though the wall clock has not reached the deadline', () => {
    // Node fires timers by the event loop's clock, read when the loop turned, so on a busy
    // process the abort can come a few milliseconds early. Faked timers make that early firing
    // certain: the abort timer runs while Date.now() is a minute short of the deadline.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const budget = withDeadline(UNBOUNDED, 60_000);
      vi.advanceTimersByTime(60_000);
      expect(budget.signal?.aborted).toBe(true);
      expect(remainingMs(budget)).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('aborts the signal with DeadlineExceeded when the budget runs out', async () => {
    const signal = withDeadline(UNBOUNDED, 5).signal!;
    const reason = await new Promise((resolve) =>
      signal.addEventListener('abort', () => resolve(signal.reason), { once: true }),
    );
    expect(reason).toBeInstanceOf(DeadlineExceeded);
  });

  it('aborts an inner budget when the outer one runs out first', async () => {
    const signal = withDeadline(withDeadline(UNBOUNDED, 5), 60_000).signal!;
    const aborted = await new Promise((resolve) =>
      signal.addEventListener('abort', () => resolve(true), { once: true }),
    );
    expect(aborted).toBe(true);
  });

  it('keeps the other fields of what it narrows: a request context stays the same request', () => {
    const ctx = { ...UNBOUNDED, dryRun: true };
    expect(withDeadline(ctx, 1_000).dryRun).toBe(true);
  });
});
