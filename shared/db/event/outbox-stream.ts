import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { Origin } from '#domain/event/event.ts';
import type { Item } from '../core/helpers.ts';

/**
 * Outbox items as the table stream delivers them (NewImage), mapped to what the fan-out needs.
 * Two kinds share the `outbox` type, so one stream filter carries both: an event written with a
 * state change (`{event_id, event_type, store_id, created_at, payload}`, see eventPut in
 * ./item.ts) and an admin's redelivery request for one key (`{kind: 'redelivery', ...}`).
 */
export type OutboxRecord =
  | {
      kind: 'event';
      event_id: string;
      event_type: string;
      store_id: string;
      created_at: string;
      payload: Record<string, unknown>;
      /** Absent on events written before provenance was recorded. */
      origin: Origin | null;
      owner_key_id: number | null;
      external_id: string | null;
    }
  | { kind: 'redelivery'; event_id: string; key_id: number; round: number };

export const REDELIVERY_KIND = 'redelivery';

/** Throws on an item that is neither kind: a poison record, for the stream's failure path. */
export function outboxRecordFromImage(image: Record<string, unknown>): OutboxRecord {
  return outboxRecordFromItem(unmarshall(image as Record<string, AttributeValue>));
}

/** The same from the item as a read answers it (the express lane reads the outbox item itself). */
export function outboxRecordFromItem(item: Item): OutboxRecord {
  if (item.kind === REDELIVERY_KIND) {
    if (typeof item.event_id !== 'string' || !Number.isInteger(item.key_id) || !Number.isInteger(item.round)) {
      throw new Error(`malformed redelivery request ${String(item.pk)} ${String(item.sk)}`);
    }
    return { kind: 'redelivery', event_id: item.event_id, key_id: item.key_id, round: item.round };
  }
  const ok =
    typeof item.event_id === 'string' &&
    typeof item.event_type === 'string' &&
    typeof item.store_id === 'string' &&
    typeof item.created_at === 'string' &&
    item.payload !== null &&
    typeof item.payload === 'object';
  if (!ok) throw new Error(`malformed outbox item ${String(item.pk)} ${String(item.sk)}`);
  return {
    kind: 'event',
    event_id: item.event_id,
    event_type: item.event_type,
    store_id: item.store_id,
    created_at: item.created_at,
    payload: item.payload,
    origin: item.origin ?? null,
    owner_key_id: item.owner_key_id ?? null,
    external_id: item.external_id ?? null,
  };
}
