import { Duration } from 'aws-cdk-lib';
import { maxReceiveCount } from '../shared/domain/webhook/retry.ts';

/** The signer's timeout: one POST may take 10 s, a batch of 10 runs in parallel. */
export const SIGNER_TIMEOUT = Duration.seconds(30);

/** Visibility timeout of the webhook queue: 6 × the signer's timeout, as AWS advises for SQS event sources. */
export const QUEUE_VISIBILITY = Duration.seconds(SIGNER_TIMEOUT.toSeconds() * 6);

/**
 * Receives a message may spend on platform errors (throttling, a bad deploy) on top of what the
 * retry schedule needs. The signer backs off exponentially on such errors (capped at 15 min a
 * receive), so 50 receives is about 10 h of an unbroken outage before a delivery is dead-lettered.
 */
export const PLATFORM_ERROR_RECEIVES = 50;

/** The webhook queue's redrive maxReceiveCount: the schedule's receives plus the platform-error budget. */
export function queueMaxReceiveCount(schedule: readonly number[]): number {
  return maxReceiveCount(schedule) + PLATFORM_ERROR_RECEIVES;
}
