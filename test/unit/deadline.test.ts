import { describe, expect, it, vi } from 'vitest';
import { DeadlineExceeded, deadlineSignal, remainingMs, withDeadline, withGrace } from '#domain/time.ts';

describe('request deadline', () => {
  it('is unbounded outside any budget', () => {
    expect(remainingMs()).toBe(Number.POSITIVE_INFINITY);
    expect(deadlineSignal()).toBeUndefined();
  });

  it('tells the work how much of its budget is left, measured from a given instant', async () => {
    await withDeadline(10_000, async () => {
      const now = Date.now();
      const left = remainingMs(now);
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(10_000);
      expect(remainingMs(now + left + 5)).toBe(0);
    });
  });

  it('lets a nested budget shorten the outer one, never lengthen it', async () => {
    await withDeadline(1_000, async () => {
      const outer = remainingMs();
      await withDeadline(60_000, async () => expect(remainingMs()).toBeLessThanOrEqual(outer));
      await withDeadline(10, async () => expect(remainingMs()).toBeLessThanOrEqual(10));
    });
  });

  it('gives the closing write a budget of its own once the work has spent its budget', async () => {
    await withDeadline(1, async () => {
      const spent = deadlineSignal()!;
      if (!spent.aborted) await new Promise((resolve) => spent.addEventListener('abort', resolve, { once: true }));
      expect(remainingMs()).toBe(0);
      await withGrace(60_000, async () => {
        expect(remainingMs()).toBeGreaterThan(1);
        expect(deadlineSignal()?.aborted).toBe(false);
      });
      // Only inside: the spent budget is the work's again after it.
      expect(remainingMs()).toBe(0);
    });
  });

  it('has no time left once its signal has aborted, though the wall clock has not reached the deadline', async () => {
    // Node fires timers by the event loop's clock, read when the loop turned, so on a busy
    // process the abort can come a few milliseconds early. Faked timers make that early firing
    // certain: the abort timer runs while Date.now() is a minute short of the deadline.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await withDeadline(60_000, async () => {
        vi.advanceTimersByTime(60_000);
        expect(deadlineSignal()?.aborted).toBe(true);
        expect(remainingMs()).toBe(0);
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('aborts the signal with DeadlineExceeded when the budget runs out', async () => {
    const reason = await withDeadline(5, () => {
      const signal = deadlineSignal()!;
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
    });
    expect(reason).toBeInstanceOf(DeadlineExceeded);
  });

  it('aborts an inner budget when the outer one runs out first', async () => {
    const aborted = await withDeadline(5, () =>
      withDeadline(60_000, () => {
        const signal = deadlineSignal()!;
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve(true), { once: true }));
      }),
    );
    expect(aborted).toBe(true);
  });
});
