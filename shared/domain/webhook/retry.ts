/**
 * The webhook retry plan (docs/contract.md#webhooks): attempt at once, then wait `schedule[i]` seconds before
 * attempt i + 2; after the last wait's attempt fails, the delivery is `failed`.
 *
 * Where a wait is spent (see `queueWait`): up to 15 min as the received message's visibility
 * (it stays in flight), anything longer as a new message sent with `DelaySeconds` (≤ 900 s per
 * hop, the due time in its body) while the received one is deleted: a delayed message does not
 * count towards a standard queue's ~120,000 in-flight limit, so hours-long retries cannot stall
 * the queue (docs/webhooks.md, "Capacity").
 *
 * Receives: a message is received once per attempt it carries plus once per platform error
 * (throttling, a bug), which backs off exponentially by visibility. A hop starts a new message,
 * so `ApproximateReceiveCount` counts only the receives since the last one. maxReceiveCount is
 * derived here, for CDK and the local queue alike.
 */

/** SQS's own limit on DelaySeconds; also our limit on waits spent in flight. */
export const QUEUE_WAIT_LIMIT_SECONDS = 900;

/** Retry-After may lengthen a wait up to this (12 h), no further. */
export const MAX_RETRY_AFTER_SECONDS = 43_200;

/**
 * Receives kept for platform errors on top of the schedule's own: with the backoff below
 * (2, 4, … 512 s, then 900 s) they cover about 5.5 h of a failing signer before the queue
 * dead-letters the message (and the dead-letter consumer marks the delivery `failed`).
 */
export const PLATFORM_ERROR_RECEIVES = 30;

/** A message is treated as due this much before its due time (clock and timer skew). */
export const DUE_TOLERANCE_MS = 1000;

/**
 * The most receives one message takes when nothing goes wrong: the first, plus one per wait that
 * is spent in flight (the waits of 15 min or less); a longer wait continues on a new message.
 */
export function receivesForSchedule(schedule: readonly number[], waitLimit = QUEUE_WAIT_LIMIT_SECONDS): number {
  return 1 + schedule.filter((wait) => wait <= waitLimit).length;
}

/** The queue's redrive `maxReceiveCount`: well above the schedule, so platform errors cannot exhaust it. */
export function maxReceiveCount(schedule: readonly number[], waitLimit = QUEUE_WAIT_LIMIT_SECONDS): number {
  return receivesForSchedule(schedule, waitLimit) + PLATFORM_ERROR_RECEIVES;
}

/** Visibility after an unexpected error on the `receiveCount`th receive: 2, 4, 8 … seconds, capped. */
export function platformErrorBackoffSeconds(receiveCount: number, waitLimit = QUEUE_WAIT_LIMIT_SECONDS): number {
  return Math.min(waitLimit, 2 ** Math.min(Math.max(receiveCount, 1), 20));
}

export type RetryDecision = { retry: true; delaySeconds: number } | { retry: false; reason: string };

/**
 * What follows a failed attempt. `attemptsInRound` counts the attempt that just failed;
 * `retryAfterSeconds` is the receiver's Retry-After (429/503 only), which may lengthen a wait
 * but never shorten it, and never beyond 12 h.
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
  const asked = input.retryAfterSeconds === undefined ? 0 : Math.min(input.retryAfterSeconds, MAX_RETRY_AFTER_SECONDS);
  return { retry: true, delaySeconds: Math.max(planned, asked) };
}

/** How a wait of `waitSeconds` is spent: on the received message, or on a delayed copy of it. */
export type QueueWait = { via: 'visibility'; seconds: number } | { via: 'delayed-copy'; seconds: number };

export function queueWait(waitSeconds: number, waitLimit = QUEUE_WAIT_LIMIT_SECONDS): QueueWait {
  const seconds = Math.max(0, Math.ceil(waitSeconds));
  return seconds <= waitLimit ? { via: 'visibility', seconds } : { via: 'delayed-copy', seconds: waitLimit };
}

/** The next hop of a delayed copy that is not yet due: at most one limit's worth. */
export function hopDelaySeconds(remainingSeconds: number, waitLimit = QUEUE_WAIT_LIMIT_SECONDS): number {
  return Math.min(Math.max(0, Math.ceil(remainingSeconds)), waitLimit);
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
