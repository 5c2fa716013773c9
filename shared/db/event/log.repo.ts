import type { RequestContext } from '#shared/context.ts';
import { QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { batchGet, cancellationReasons, itemKey, type Item, type TransactItem } from '../core/helpers.ts';
import { readSequence, sequenceMove, sequenceValue } from '../core/sequence.ts';
import type { EventPayload, Origin } from '#domain/event/event.ts';

/**
 * The store's numbered event log (docs/webhooks.md, "How to never miss an event"). Requests only
 * write outbox items; the stream consumer numbers them here, after the commit, so no request
 * waits on the store's event counter. Numbering is one transaction per few dozen events, guarded both ways:
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
  payload: EventPayload;
  owner_key_id: number | null;
  external_id: string | null;
}

/** Events numbered in one transaction: the counter, then an update and a log entry per event (99 items; a transaction holds 100). */
export const NUMBERED_AT_ONCE = 49;

/**
 * One attempt at numbering `eventIds` (one store's, in stream order, at most NUMBERED_AT_ONCE):
 * the events and the counter in one BatchGetItem, then the ones without a number take the next
 * ones in one transaction guarded both ways. `numbered` gives every event's sequence (the ones
 * they had and the new ones); `lost` when another consumer numbered some of these or other events
 * first, and nothing was written (the use case reads them all again: shared/app/fan-out.ts).
 */
export async function numberEvents(
  ctx: RequestContext,
  storeId: string,
  eventIds: readonly string[],
): Promise<{ kind: 'numbered'; sequences: Map<string, number> } | { kind: 'lost' }> {
  const eventKeys = eventIds.map((id) => keys.outboxEvent(storeId, id));
  const found = await batchGet(ctx, [...eventKeys, eventCounter(storeId)]);
  const sequences = new Map<string, number>();
  const fresh: Item[] = [];
  for (const [i, key] of eventKeys.entries()) {
    const event = found.get(itemKey(key));
    if (!event) throw new Error(`store ${storeId} has no event ${eventIds[i]} to number`);
    if (typeof event.sequence === 'number') sequences.set(event.event_id, event.sequence);
    else if (!fresh.some((e) => e.event_id === event.event_id)) fresh.push(event);
  }
  if (fresh.length === 0) return { kind: 'numbered', sequences };
  const last = sequenceValue(found.get(itemKey(eventCounter(storeId))));
  try {
    await send(
      ctx,
      new TransactWriteCommand({
        TransactItems: [
          sequenceMove(eventCounter(storeId), last, last + fresh.length),
          ...fresh.flatMap((event, i) => numberActions(storeId, event, last + 1 + i)),
        ],
      }),
    );
  } catch (err) {
    if (!cancellationReasons(err)) throw err;
    return { kind: 'lost' };
  }
  for (const [i, event] of fresh.entries()) sequences.set(event.event_id, last + 1 + i);
  return { kind: 'numbered', sequences };
}

/** The event takes `sequence` only if it has none, and its log entry takes the number only if free. */
function numberActions(storeId: string, event: Item, sequence: number): TransactItem[] {
  const { pk: _pk, sk: _sk, type: _type, kind: _kind, ...fields } = event;
  return [
    {
      Update: {
        TableName: tableName(),
        Key: keys.outboxEvent(storeId, event.event_id),
        UpdateExpression: 'SET #seq = :seq',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#seq)',
        ExpressionAttributeNames: { '#seq': 'sequence' },
        ExpressionAttributeValues: { ':seq': sequence },
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...fields, ...keys.eventLog(storeId, sequence), type: ENTITY.eventLog, sequence },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
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
  ctx: RequestContext,
  storeId: string,
  after: number,
  limit: number,
  nowSeconds: number,
  checkExpiry = after > 0,
): Promise<{ events: LoggedEvent[]; more: boolean; expired: boolean }> {
  let page = await readLogPage(ctx, storeId, after, limit);
  let expired = false;
  if (checkExpiry) {
    if (page.events[0]) expired = page.events[0].sequence !== after + 1 || page.events[0].ttl < nowSeconds;
    else if ((await readSequence(ctx, eventCounter(storeId))) > after) {
      // Nothing after the cursor, yet the counter is past it: either the events are gone, or the
      // stream consumer numbered them between the Query and this read (a reader at the head of
      // the log while events flow). Entries commit with the counter's move, so a Query now sees
      // every number the counter just showed: only if the next one is still missing is it gone.
      page = await readLogPage(ctx, storeId, after, limit);
      const first = page.events[0];
      expired = !first || first.sequence !== after + 1 || first.ttl < nowSeconds;
    }
  }
  return { events: page.events.filter((e) => e.ttl >= nowSeconds), more: page.more, expired };
}

/**
 * Log entries after `after`, ascending: one strongly consistent Query of up to `limit`, entries
 * past their TTL included (DynamoDB deletes them lazily), so a reader walking the log always moves
 * on (an ordered destination's run, shared/app/ordered-delivery.ts).
 */
export async function readLogPage(ctx: RequestContext, storeId: string, after: number, limit: number) {
  const out = await send(
    ctx,
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
  return { events: (out.Items ?? []).map(toLogged), more: out.LastEvaluatedKey !== undefined };
}

export const lastSequence = (ctx: RequestContext, storeId: string) => readSequence(ctx, eventCounter(storeId));
