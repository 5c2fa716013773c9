import { describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '#shared/config.ts';
import {
  afterFailure,
  hopDelaySeconds,
  MAX_RETRY_AFTER_SECONDS,
  maxReceiveCount,
  parseRetryAfter,
  PLATFORM_ERROR_RECEIVES,
  platformErrorBackoffSeconds,
  queueWait,
  receivesForSchedule,
} from '#domain/webhook/retry.ts';

const schedule = DEFAULT_WEBHOOK_RETRY_SCHEDULE; // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h

describe('webhook retry plan', () => {
  it('waits the scheduled time after each failed attempt', () => {
    const max = maxReceiveCount(schedule);
    const waits = schedule.map((_, i) =>
      afterFailure({ schedule, attemptsInRound: i + 1, receiveCount: i + 1, maxReceiveCount: max }),
    );
    expect(waits).toEqual(schedule.map((s) => ({ retry: true, delaySeconds: s })));
  });

  it('gives up after the last scheduled attempt (1 + the number of waits)', () => {
    expect(afterFailure({ schedule, attemptsInRound: 8, receiveCount: 10, maxReceiveCount: 13 })).toEqual({
      retry: false,
      reason: 'gave up after 8 attempts',
    });
    expect(afterFailure({ schedule: [1, 1, 2], attemptsInRound: 4, receiveCount: 4, maxReceiveCount: 7 }).retry).toBe(
      false,
    );
    expect(afterFailure({ schedule: [], attemptsInRound: 1, receiveCount: 1, maxReceiveCount: 4 }).retry).toBe(false);
  });

  it('gives up early when the queue would dead-letter the next receive anyway', () => {
    expect(afterFailure({ schedule, attemptsInRound: 2, receiveCount: 13, maxReceiveCount: 13 })).toEqual({
      retry: false,
      reason: "gave up after 13 receives (the queue's limit)",
    });
  });

  it('lengthens a wait for Retry-After, never shortens it, and caps it at 12 h', () => {
    const base = { schedule, attemptsInRound: 1, receiveCount: 1, maxReceiveCount: 13 };
    expect(afterFailure({ ...base, retryAfterSeconds: 120 })).toEqual({ retry: true, delaySeconds: 120 });
    expect(afterFailure({ ...base, retryAfterSeconds: 1 })).toEqual({ retry: true, delaySeconds: 5 });
    expect(afterFailure({ ...base, retryAfterSeconds: 10 ** 9 })).toEqual({
      retry: true,
      delaySeconds: MAX_RETRY_AFTER_SECONDS,
    });
  });

  it('spends waits up to 15 min in flight and longer ones on delayed copies of at most 900 s', () => {
    expect(queueWait(5)).toEqual({ via: 'visibility', seconds: 5 });
    expect(queueWait(0.2)).toEqual({ via: 'visibility', seconds: 1 });
    expect(queueWait(-3)).toEqual({ via: 'visibility', seconds: 0 });
    expect(queueWait(900)).toEqual({ via: 'visibility', seconds: 900 });
    expect(queueWait(901)).toEqual({ via: 'delayed-copy', seconds: 900 });
    expect(queueWait(50_400)).toEqual({ via: 'delayed-copy', seconds: 900 });
    expect(queueWait(6, 2)).toEqual({ via: 'delayed-copy', seconds: 2 });
    expect(hopDelaySeconds(50_400)).toBe(900);
    expect(hopDelaySeconds(12.2)).toBe(13);
    expect(hopDelaySeconds(-1)).toBe(0);
  });

  it('derives the queue receive limit from the schedule, far above it', () => {
    // 1 first receive + one per wait spent in flight (5 s, 295 s); the longer ones continue on new messages.
    expect(receivesForSchedule(schedule)).toBe(3);
    expect(maxReceiveCount(schedule)).toBe(3 + PLATFORM_ERROR_RECEIVES);
    expect(receivesForSchedule([1, 1, 2])).toBe(4);
    expect(receivesForSchedule([1, 6], 2)).toBe(2);
    expect(receivesForSchedule([0])).toBe(2);
  });

  it('backs off exponentially on platform errors, up to the in-flight wait limit', () => {
    expect([1, 2, 3, 4, 9, 10, 11, 40].map((n) => platformErrorBackoffSeconds(n))).toEqual([
      2, 4, 8, 16, 512, 900, 900, 900,
    ]);
    expect([1, 2, 3].map((n) => platformErrorBackoffSeconds(n, 3))).toEqual([2, 3, 3]);
    // The budget of platform-error receives covers hours, not minutes.
    const covered = Array.from({ length: PLATFORM_ERROR_RECEIVES }, (_, i) =>
      platformErrorBackoffSeconds(i + 1),
    ).reduce((a, b) => a + b, 0);
    expect(covered).toBeGreaterThan(5 * 3600);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-22T01:00:00.000Z');
    expect(parseRetryAfter('120', now)).toBe(120);
    expect(parseRetryAfter(' 7 ', now)).toBe(7);
    expect(parseRetryAfter('Sun, 22 Nov 2026 01:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Sun, 22 Nov 2026 00:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('2026', now)).toBe(2026);
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});
