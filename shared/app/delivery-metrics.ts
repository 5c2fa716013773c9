import { emitMetrics, MetricUnit } from '#shared/metrics.ts';

/** What became of one delivery step: the `outcome` dimension of the Deliveries metric. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'not_deliverable' | 'dead_lettered' | 'parked';

/**
 * One EMF line per step: Deliveries (count) by outcome, and, when an HTTP attempt was made,
 * AttemptLatency. `failed` and `retrying` are tenant failures (a receiver is down);
 * `dead_lettered` is a platform failure (the signer could not process it).
 */
export function recordDelivery(outcome: DeliveryOutcome, attemptMs?: number): void {
  emitMetrics({ outcome }, [
    ['Deliveries', MetricUnit.Count, 1],
    ...(attemptMs === undefined ? [] : [['AttemptLatency', MetricUnit.Milliseconds, attemptMs] as const]),
  ]);
}
