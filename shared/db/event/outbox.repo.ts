import type { RequestContext } from '#shared/context.ts';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { keys } from '../keys.ts';
import { batchGet, itemKey } from '../core/helpers.ts';
import { outboxRecordFromItem, type OutboxRecord } from './outbox-stream.ts';

const REPLAY_TTL_SECONDS = 24 * 60 * 60;

/**
 * Runs an event through the fan-out again: a copy of its outbox item under a new sort key, which
 * the table stream carries to the fan-out like the original. The fan-out claims one delivery per
 * (event, key), so keys that already have this event get nothing twice and keys that do not (the
 * stream record failed, or the key got its URL later) get it now. Outbox items live 30 days
 * (EVENT_RETENTION_SECONDS): `no_event` when the store has no (more) event of that id, and
 * nothing is written.
 */
export async function replayOutboxEvent(
  ctx: RequestContext,
  storeId: string,
  eventId: string,
  now: Date,
): Promise<{ kind: 'replayed'; event_id: string; replayed_at: string } | { kind: 'no_event' }> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.outboxEvent(storeId, eventId), ConsistentRead: true }),
  );
  if (!out.Item) return { kind: 'no_event' };
  const stamp = now.toISOString();
  await send(
    ctx,
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...out.Item,
        ...keys.outboxReplay(storeId, eventId, stamp),
        ttl: Math.floor(now.getTime() / 1000) + REPLAY_TTL_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { kind: 'replayed', event_id: eventId, replayed_at: stamp };
}

/** An outbox event as the express lane reads it: the record, its number once it has one, and its predecessor's id. */
export interface OutboxEventState {
  record: Extract<OutboxRecord, { kind: 'event' }>;
  sequence: number | undefined;
  /** The event of the same order before it (`null`: none); absent on other events and older order events. */
  follows: string | null | undefined;
}

/** The outbox events `eventIds` of a store that are still kept (30 days), in one consistent BatchGetItem. */
export async function readOutboxEvents(
  ctx: RequestContext,
  storeId: string,
  eventIds: readonly string[],
): Promise<Map<string, OutboxEventState>> {
  const found = await batchGet(
    ctx,
    eventIds.map((id) => keys.outboxEvent(storeId, id)),
  );
  const states = new Map<string, OutboxEventState>();
  for (const id of eventIds) {
    const item = found.get(itemKey(keys.outboxEvent(storeId, id)));
    if (!item) continue;
    const record = outboxRecordFromItem(item);
    if (record.kind !== 'event') continue;
    states.set(id, {
      record,
      sequence: typeof item.sequence === 'number' ? item.sequence : undefined,
      follows: item.follows as string | null | undefined,
    });
  }
  return states;
}
