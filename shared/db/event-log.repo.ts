import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { batchGet, cancellationReasons, itemKey, type Item } from './helpers.ts';
import { readSequence, sequenceMove, sequenceValue } from './sequence.ts';
import { backoff } from '#domain/retry.ts';
import type { Origin } from '#domain/event/event.ts';

/**
 * The store's numbered event log (docs/webhooks.md, "How to never miss an event"). Requests only
 * write outbox items; the stream consumer numbers them here, after the commit, so no request
 * waits on the store's event counter. Numbering is one transaction, guarded both ways:
 * the counter moves from the value read (no two events get one number, no number is skipped)
 * and the event takes a number only if it has none (a retried stream batch numbers nothing twice).
 */
const eventCounter = (storeId: string) => keys.sequence(storeId, 'event');

export interface LoggedEvent {
  event_id: string;
  sequence: number;
  event_type: string;
  created_at: string;
  ttl: number;
  origin: Origin | null;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
  owner_key_id: number | null;
  external_id: string | null;
}

/** The sequence of `eventId` in its store: the one it has, or the next one, taken now. */
export async function assignSequence(storeId: string, eventId: string): Promise<number> {
  const eventKey = keys.outboxEvent(storeId, eventId);
  for (let attempt = 1; ; attempt++) {
    const found = await batchGet([eventKey, eventCounter(storeId)]);
    const event = found.get(itemKey(eventKey));
    if (!event) throw new Error(`store ${storeId} has no event ${eventId} to number`);
    if (typeof event.sequence === 'number') return event.sequence;
    const last = sequenceValue(found.get(itemKey(eventCounter(storeId))));
    const next = last + 1;
    const { pk: _pk, sk: _sk, type: _type, kind: _kind, ...fields } = event;
    try {
      await db().send(
        new TransactWriteCommand({
          TransactItems: [
            sequenceMove(eventCounter(storeId), last, next),
            {
              Update: {
                TableName: tableName(),
                Key: eventKey,
                UpdateExpression: 'SET #seq = :seq',
                ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#seq)',
                ExpressionAttributeNames: { '#seq': 'sequence' },
                ExpressionAttributeValues: { ':seq': next },
              },
            },
            {
              Put: {
                TableName: tableName(),
                Item: { ...fields, ...keys.eventLog(storeId, next), type: ENTITY.eventLog, sequence: next },
                ConditionExpression: 'attribute_not_exists(pk)',
              },
            },
          ],
        }),
      );
      return next;
    } catch (err) {
      // Another consumer numbered this event or another one first: read both again.
      if (!cancellationReasons(err)) throw err;
      if (attempt >= 50) throw new Error(`store ${storeId}: could not number event ${eventId}`, { cause: err });
      await backoff(Math.min(attempt, 5));
    }
  }
}

const toLogged = (item: Item): LoggedEvent => ({
  event_id: item.event_id,
  sequence: Number(item.sequence),
  event_type: item.event_type,
  created_at: item.created_at,
  ttl: Number(item.ttl ?? 0),
  origin: (item.origin as Origin | undefined) ?? null,
  payload: item.payload,
  owner_key_id: item.owner_key_id ?? null,
  external_id: item.external_id ?? null,
});

/**
 * Log entries after `after`, ascending, one Query of up to `limit`. `expired`: entry after+1 is
 * gone (or past its TTL, which DynamoDB deletes lazily): the events the caller missed can no longer
 * be listed. `more`: the Query stopped at `limit`.
 */
export async function readEventLog(
  storeId: string,
  after: number,
  limit: number,
  nowSeconds: number,
  checkExpiry = after > 0,
): Promise<{ events: LoggedEvent[]; more: boolean; expired: boolean }> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': keys.eventLog(storeId, 0).pk,
        ':from': keys.eventLog(storeId, after + 1).sk,
        ':to': keys.eventLogEnd,
      },
      Limit: limit,
      ConsistentRead: true,
    }),
  );
  const events = (out.Items ?? []).map(toLogged);
  const first = events[0];
  let expired = false;
  if (checkExpiry) {
    if (first) expired = first.sequence !== after + 1 || first.ttl < nowSeconds;
    // Nothing after the cursor: caught up, unless the counter says events were numbered and are gone.
    else expired = (await readSequence(eventCounter(storeId))) > after;
  }
  return { events: events.filter((e) => e.ttl >= nowSeconds), more: out.LastEvaluatedKey !== undefined, expired };
}

export const lastSequence = (storeId: string) => readSequence(eventCounter(storeId));
