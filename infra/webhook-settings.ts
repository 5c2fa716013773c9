import { Duration } from 'aws-cdk-lib';
import { maxReceiveCount, receivesForSchedule } from '#domain/webhook/retry.ts';

/** The signer's timeout: one POST may take 10 s, a batch of 10 runs in parallel. */
export const SIGNER_TIMEOUT = Duration.seconds(30);

/** Visibility timeout of the webhook queue: 6 × the signer's timeout, as AWS advises for SQS event sources. */
export const QUEUE_VISIBILITY = Duration.seconds(SIGNER_TIMEOUT.toSeconds() * 6);

/** The fan-out's timeout (a stream batch of 100 events, or an express batch of 10). */
export const EVENTS_TIMEOUT = Duration.seconds(60);

/** Visibility timeout of the express queue: 6 × the fan-out's timeout, as for the webhook queue. */
export const EXPRESS_VISIBILITY = Duration.seconds(EVENTS_TIMEOUT.toSeconds() * 6);

/**
 * Concurrent fan-out executions the express queue may take. Each message is one order event,
 * numbered and queued in a few round trips (~0.1 s in AWS), so 5 × 10 messages at once is far
 * above any store's order rate, while a burst cannot crowd the account's concurrency.
 */
export const EXPRESS_MAX_CONCURRENCY = 5;

/**
 * Receives a message may spend on platform errors (throttling, a bad deploy) beyond what the
 * schedule needs. The signer backs off exponentially from them (2 s doubling, capped at 15 min),
 * so 30 receives are roughly 5 h of an unbroken platform outage before a delivery is dead-lettered.
 */
export const PLATFORM_ERROR_RECEIVES = 30;

/**
 * The webhook queue's redrive maxReceiveCount: the signer's own limit
 * (shared/domain/webhook/retry.ts), and never less than the schedule's receives plus the
 * platform-error budget, so the queue does not give up before the code does.
 */
export function queueMaxReceiveCount(schedule: readonly number[]): number {
  return Math.max(maxReceiveCount(schedule), receivesForSchedule(schedule) + PLATFORM_ERROR_RECEIVES);
}

/**
 * The signer's executions split between its two lanes (docs/webhooks.md, "Lanes"), each the
 * maximum concurrency of its own event source mapping on the one function: the slow lane (endpoints
 * whose circuit is open) gets a tenth of the reservation, at least 2 (an SQS mapping's minimum), and
 * the fast lane the rest, so the two together never exceed the reserved concurrency and failing
 * endpoints can never take more than the slow lane's share. With nothing reserved (0), 10 and 2.
 */
export function laneConcurrency(signerConcurrency: number): { fast: number; slow: number } {
  if (signerConcurrency <= 0) return { fast: 10, slow: 2 };
  const slow = Math.max(2, Math.round(signerConcurrency / 10));
  return { fast: Math.max(2, signerConcurrency - slow), slow };
}

/** Slow-lane alarm: its oldest message has waited this long (its endpoints' attempts are late, the fast lane is not). */
export const SLOW_LANE_AGE_ALARM = Duration.minutes(30);
