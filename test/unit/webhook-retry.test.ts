import { describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_RETRY_SCHEDULE } from '../../shared/config.ts';
import {
  afterFailure,
  MAX_WAIT_PER_RECEIVE_SECONDS,
  maxReceiveCount,
  parseRetryAfter,
  RECEIVE_SLACK,
  receivesForSchedule,
  visibilityFor,
} from '../../shared/domain/webhook/retry.ts';

const schedule = DEFAULT_WEBHOOK_RETRY_SCHEDULE; // 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h

describe('webhook retry plan', () => {
  it('waits the scheduled time after each failed attempt', () => {
    const max = maxReceiveCount(schedule);
    const waits = schedule.map((_, i) => afterFailure({ schedule, attemptsInRound: i + 1, receiveCount: i + 1, maxReceiveCount: max }));
    expect(waits).toEqual(schedule.map((s) => ({ retry: true, delaySeconds: s })));
  });

  it('gives up after the last scheduled attempt (1 + the number of waits)', () => {
    expect(afterFailure({ schedule, attemptsInRound: 8, receiveCount: 10, maxReceiveCount: 13 })).toEqual({
      retry: false,
      reason: 'gave up after 8 attempts',
    });
    expect(afterFailure({ schedule: [1, 1, 2], attemptsInRound: 4, receiveCount: 4, maxReceiveCount: 7 }).retry).toBe(false);
    expect(afterFailure({ schedule: [], attemptsInRound: 1, receiveCount: 1, maxReceiveCount: 4 }).retry).toBe(false);
  });

  it('gives up early when the queue would dead-letter the next receive anyway', () => {
    expect(afterFailure({ schedule, attemptsInRound: 2, receiveCount: 13, maxReceiveCount: 13 })).toEqual({
      retry: false,
      reason: 'gave up after 13 receives (the queue\'s limit)',
    });
  });

  it('lengthens a wait for Retry-After, never shortens it, and caps it at one receive', () => {
    const base = { schedule, attemptsInRound: 1, receiveCount: 1, maxReceiveCount: 13 };
    expect(afterFailure({ ...base, retryAfterSeconds: 120 })).toEqual({ retry: true, delaySeconds: 120 });
    expect(afterFailure({ ...base, retryAfterSeconds: 1 })).toEqual({ retry: true, delaySeconds: 5 });
    expect(afterFailure({ ...base, retryAfterSeconds: 10 ** 9 })).toEqual({ retry: true, delaySeconds: MAX_WAIT_PER_RECEIVE_SECONDS });
  });

  it('chains visibility changes for waits beyond the 12 h SQS limit', () => {
    expect(visibilityFor(5)).toBe(5);
    expect(visibilityFor(0.2)).toBe(1);
    expect(visibilityFor(-3)).toBe(0);
    expect(visibilityFor(36_000)).toBe(36_000);
    expect(visibilityFor(86_400)).toBe(MAX_WAIT_PER_RECEIVE_SECONDS);
    expect(MAX_WAIT_PER_RECEIVE_SECONDS).toBeLessThan(43_200);
  });

  it('derives the queue receive limit from the schedule', () => {
    // 1 first receive + one per wait up to 5 h + two for the 14 h wait (SQS caps one at 12 h), plus the slack.
    expect(receivesForSchedule(schedule)).toBe(1 + 6 + 2);
    expect(maxReceiveCount(schedule)).toBe(9 + RECEIVE_SLACK);
    expect(receivesForSchedule([1, 1, 2])).toBe(4);
    expect(receivesForSchedule([0])).toBe(2);
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
