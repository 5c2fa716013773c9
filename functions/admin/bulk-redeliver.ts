import * as v from 'valibot';
import { listDeliveries, startRedelivery } from '#db/webhook/delivery.repo.ts';
import { deliveryView } from '#domain/webhook/delivery.ts';
import { DomainError } from '#domain/errors.ts';

/** One call redelivers at most this many (oldest first); the answer says where to go on from. */
export const BULK_REDELIVER_LIMIT = 500;

export const Since = v.pipe(
  v.string(),
  v.check(
    (s) => /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(s) && !Number.isNaN(Date.parse(s)),
    'must be an ISO 8601 time like 2026-11-24T10:00:00Z',
  ),
  v.transform((s) => new Date(Date.parse(s)).toISOString()),
);
export const RedeliverState = v.picklist(['pending', 'delivered', 'failed'], 'must be pending, delivered or failed');

/**
 * Every delivery of a key created at or after `since` (and in `state`, when given) starts a new
 * round, oldest first, each as `webhooks redeliver --event` does it (same webhook-id and body).
 * A delivery redelivered concurrently by someone else is skipped, not an error: it is under way.
 */
export async function redeliverSince(
  keyId: number,
  since: string,
  state: 'pending' | 'delivered' | 'failed' | undefined,
) {
  const chosen = (await listDeliveries(keyId))
    .filter((d) => d.created_at >= since && (state === undefined || d.state === state))
    .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.event_id.localeCompare(b.event_id));
  const batch = chosen.slice(0, BULK_REDELIVER_LIMIT);
  const now = new Date().toISOString();
  const started = [];
  const skipped: string[] = [];
  for (const d of batch) {
    try {
      started.push(deliveryView(await startRedelivery(keyId, d.event_id, now)));
    } catch (err) {
      if (!(err instanceof DomainError) || (err.code !== 'conflict' && err.code !== 'not_found')) throw err;
      skipped.push(d.event_id);
    }
  }
  const rest = chosen[BULK_REDELIVER_LIMIT];
  return {
    redelivered: started.length,
    skipped,
    // More than one call's worth: run again with this --since.
    next_since: rest ? rest.created_at : null,
    data: started,
  };
}
