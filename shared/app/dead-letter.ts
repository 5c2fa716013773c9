import type { RequestContext } from '#shared/context.ts';
import { getDelivery, updateDelivery } from '#db/webhook/delivery.repo.ts';
import type { DeliveryMessage, DeliveryState } from '#domain/webhook/delivery.ts';

export const DEAD_LETTER_ERROR =
  'dead-lettered: the signer could not process this delivery (a platform error, see its logs); redeliver it once fixed';

/** Left as it was (delivered, failed, superseded or expired), or marked failed (`recorded`: its round was still current). */
export type DeadLetterOutcome =
  | { kind: 'finished'; state: DeliveryState | null }
  | { kind: 'marked_failed'; storeId: string; recorded: boolean };

/**
 * One dead-lettered message: the queue gave up on it after maxReceiveCount receives that never
 * finished it (platform errors). A pending delivery of its round becomes `failed` with that
 * reason, so nothing stays `pending` forever; a delivered, failed or superseded one is left as it
 * is. `webhooks redeliver` starts it again.
 */
export async function recordDeadLetter(ctx: RequestContext, message: DeliveryMessage): Promise<DeadLetterOutcome> {
  const { event_id: eventId, key_id: keyId, round } = message;
  const delivery = await getDelivery(ctx, keyId, eventId);
  if (!delivery || delivery.round !== round || delivery.state !== 'pending')
    return { kind: 'finished', state: delivery?.state ?? null };
  const updated = await updateDelivery(ctx, keyId, eventId, round, {
    state: 'failed',
    attempted: false,
    last_error: DEAD_LETTER_ERROR,
    next_attempt_at: null,
    now: new Date().toISOString(),
  });
  return { kind: 'marked_failed', storeId: delivery.store_id, recorded: updated !== undefined };
}
