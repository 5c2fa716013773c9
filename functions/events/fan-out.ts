import { listKeysOfStore, type KeyRecord } from '../../shared/db/key.repo.ts';
import { createDelivery, getDelivery, markQueued } from '../../shared/db/delivery.repo.ts';
import type { OutboxRecord } from '../../shared/db/outbox-stream.ts';
import { eventBody, type Delivery } from '../../shared/domain/webhook/delivery.ts';
import { sendDeliveryMessage } from '../../shared/queue/sqs.ts';
import { log } from '../../shared/log.ts';

/** Keys that receive webhooks (docs/contract.md#webhooks): active, holding `orders:read`, with a URL. */
export const receivesWebhooks = (k: KeyRecord) => k.status === 'active' && k.abilities.includes('orders:read') && k.webhook_url !== null;

/** ...and of those, the ones that chose this event (`--events`, default all). */
const subscribesTo = (eventType: string) => (k: KeyRecord) => (k.events as readonly string[]).includes(eventType);

/**
 * Queue the message of `delivery`'s current round unless a replay already did. SQS standard
 * queues have no deduplication, so the delivery log is the idempotency record: it is created
 * (conditionally) before the send and marked after it. A crash between the two sends the message
 * again on the replay; the signer drops what is already delivered.
 */
async function queueOnce(delivery: Delivery): Promise<boolean> {
  if (delivery.queued_round !== null && delivery.queued_round >= delivery.round) return false;
  await sendDeliveryMessage({ event_id: delivery.event_id, key_id: delivery.key_id, round: delivery.round });
  await markQueued(delivery.key_id, delivery.event_id, delivery.round);
  return true;
}

async function fanOutEvent(event: Extract<OutboxRecord, { kind: 'event' }>, now: string): Promise<number> {
  const targets = (await listKeysOfStore(event.store_id, false)).filter(receivesWebhooks).filter(subscribesTo(event.event_type));
  // The event's own body, laid out once: every key and every retry sends the same bytes.
  const body = eventBody(event.payload);
  const queued = await Promise.all(
    targets.map(async (key) => {
      const fresh: Delivery = {
        key_id: key.id,
        event_id: event.event_id,
        event_type: event.event_type,
        store_id: event.store_id,
        state: 'pending',
        attempts: 0,
        round: 0,
        round_attempts: 0,
        queued_round: null,
        last_status_code: null,
        last_error: null,
        created_at: now,
        updated_at: now,
        next_attempt_at: now,
        last_attempt_at: null,
        delivered_at: null,
        parked_at: null,
        body,
      };
      const created = await createDelivery(fresh);
      return queueOnce(created.created ? fresh : created.existing);
    }),
  );
  return queued.filter(Boolean).length;
}

async function fanOutRedelivery(request: Extract<OutboxRecord, { kind: 'redelivery' }>): Promise<number> {
  const delivery = await getDelivery(request.key_id, request.event_id);
  // Expired, or a newer redelivery superseded this request: its own request queues it.
  if (!delivery || delivery.round !== request.round) return 0;
  return (await queueOnce(delivery)) ? 1 : 0;
}

/** One outbox record → one queue message per receiving key (or the one key of a redelivery). */
export async function fanOut(record: OutboxRecord, now = new Date().toISOString()): Promise<void> {
  const queued = record.kind === 'event' ? await fanOutEvent(record, now) : await fanOutRedelivery(record);
  log('info', 'webhook fan-out', { kind: record.kind, event_id: record.event_id, queued });
}
