/**
 * The webhook retry plan (CONTRACT §10): attempt at once, then wait `schedule[i]` seconds before
 * attempt i + 2; after the last wait's attempt fails, the delivery is `failed` and the message
 * goes to the dead-letter queue.
 *
 * Waits are per-message SQS visibility changes. SQS keeps a received message invisible for at
 * most 12 h counted from its receive, so a longer wait (the default 24 h) is chained: the message
 * comes back after the cap, the signer sees from the delivery log's `next_attempt_at` that it is
 * not due, and puts it back to sleep without an attempt. Every receive counts towards the queue's
 * maxReceiveCount, so that figure is derived from the schedule here, for CDK and the local queue
 * alike, with some slack for receives that never reach the code (throttled poller, timeouts).
 */
export const SQS_MAX_VISIBILITY_SECONDS = 43_200;

/** One receive's longest wait: the 12 h cap less the invocation's own time since the receive. */
export const MAX_WAIT_PER_RECEIVE_SECONDS = SQS_MAX_VISIBILITY_SECONDS - 300;

/** Receives that may pass without an attempt before the message is dead-lettered early. */
export const RECEIVE_SLACK = 3;

/** A message is treated as due this much before its `next_attempt_at` (clock and timer skew). */
export const DUE_TOLERANCE_MS = 1000;

/** The receives the whole schedule takes when nothing goes wrong. */
export function receivesForSchedule(schedule: readonly number[]): number {
  return 1 + schedule.reduce((n, wait) => n + Math.max(1, Math.ceil(wait / MAX_WAIT_PER_RECEIVE_SECONDS)), 0);
}

/** The queue's redrive `maxReceiveCount`. */
export function maxReceiveCount(schedule: readonly number[]): number {
  return receivesForSchedule(schedule) + RECEIVE_SLACK;
}

export type RetryDecision = { retry: true; delaySeconds: number } | { retry: false; reason: string };

/**
 * What follows a failed attempt. `attemptsInRound` counts the attempt that just failed;
 * `retryAfterSeconds` is the receiver's Retry-After (429/503 only), which may lengthen a wait
 * but never shorten it, and never beyond one receive's cap.
 */
export function afterFailure(input: {
  schedule: readonly number[];
  attemptsInRound: number;
  receiveCount: number;
  maxReceiveCount: number;
  retryAfterSeconds?: number | undefined;
}): RetryDecision {
  const planned = input.schedule[input.attemptsInRound - 1];
  if (planned === undefined) return { retry: false, reason: `gave up after ${input.attemptsInRound} attempts` };
  if (input.receiveCount >= input.maxReceiveCount) {
    return { retry: false, reason: `gave up after ${input.receiveCount} receives (the queue's limit)` };
  }
  const asked = input.retryAfterSeconds === undefined ? 0 : Math.min(input.retryAfterSeconds, MAX_WAIT_PER_RECEIVE_SECONDS);
  return { retry: true, delaySeconds: Math.max(planned, asked) };
}

/** The visibility timeout that sleeps a message for `waitSeconds`, or for one receive's cap. */
export function visibilityFor(waitSeconds: number): number {
  return Math.min(Math.max(0, Math.ceil(waitSeconds)), MAX_WAIT_PER_RECEIVE_SECONDS);
}

/** Retry-After as whole seconds: delta-seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at) || !/[a-z]/i.test(trimmed)) return undefined;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}
