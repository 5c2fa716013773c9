import { abilityFor } from '../event/event.ts';
import { eventBody } from './delivery.ts';

/**
 * How an event travels to an SQS queue or an EventBridge bus (docs/destinations.md): the same body
 * a webhook POSTs, with what each service adds around it. Pure: the sending is the signer's
 * (functions/webhooks/destinations/).
 */

/**
 * The groups of a FIFO queue, and the unit an ordered destination is delivered in: the event's
 * family (the read ability it needs). A store's order events never wait behind its catalog import
 * (docs/webhooks.md, "Order events first" holds for a FIFO queue too), and a consumer may work the
 * families side by side (SQS hands out one group's messages to one consumer at a time).
 */
export type Family = 'orders' | 'catalog' | 'content' | 'other';
export const ORDERED_FAMILIES: readonly Family[] = ['orders', 'catalog', 'content'];

export function familyOf(eventType: string): Family {
  switch (abilityFor(eventType)) {
    case 'orders:read':
      return 'orders';
    case 'catalog:read':
      return 'catalog';
    case 'content:read':
      return 'content';
    default:
      return 'other';
  }
}

/** `MessageGroupId` on a FIFO queue: the store and the family (`acme:orders`); a ping is a group of its own (`acme:ping`). */
export function messageGroupId(storeId: string, eventType: string): string {
  const family = familyOf(eventType);
  return `${storeId}:${family === 'other' ? 'ping' : family}`;
}

/**
 * `MessageDeduplicationId`: the event id, so a retry SQS still remembers (5 minutes) is one message.
 * A redelivery (`webhooks redeliver`, a new round) is asked for on purpose: it carries the round,
 * or SQS would drop it as the first delivery's twin.
 */
export const deduplicationId = (eventId: string, round: number) => (round === 0 ? eventId : `${eventId}-r${round}`);

/** The message attributes an SQS consumer can filter on without parsing the body. */
export function messageAttributes(eventId: string, eventType: string, sequence: number | undefined) {
  return {
    event_id: { DataType: 'String', StringValue: eventId },
    event_type: { DataType: 'String', StringValue: eventType },
    ...(sequence === undefined ? {} : { sequence: { DataType: 'Number', StringValue: String(sequence) } }),
  };
}

/** SQS's size limit of a message (body and attributes: their names, types and values) we keep to. */
export const SQS_MAX_MESSAGE_BYTES = 262_144;
/** EventBridge's limit of one PutEvents entry, counted as `eventBridgeEntrySize` counts it. */
export const EVENTBRIDGE_MAX_ENTRY_BYTES = 262_144;
/** `Source` of every EventBridge entry: what a rule matches (docs/destinations.md). */
export const EVENTBRIDGE_SOURCE = 'store-integration-api';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** A message's size as SQS counts it: the body plus each attribute's name, data type and value. */
export function sqsMessageSize(
  body: string,
  attributes: Record<string, { DataType: string; StringValue: string }>,
): number {
  return Object.entries(attributes).reduce(
    (n, [name, a]) => n + bytes(name) + bytes(a.DataType) + bytes(a.StringValue),
    bytes(body),
  );
}

/**
 * An entry's size as EventBridge counts it ("Calculating PutEvents event entry size"): 14 bytes
 * for `Time`, and the UTF-8 bytes of `Source`, `DetailType`, `Detail` and each of `Resources`.
 */
export function eventBridgeEntrySize(entry: {
  Time?: unknown;
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Resources?: readonly string[];
}): number {
  return (
    (entry.Time === undefined ? 0 : 14) +
    bytes(entry.Source ?? '') +
    bytes(entry.DetailType ?? '') +
    bytes(entry.Detail ?? '') +
    (entry.Resources ?? []).reduce((n, r) => n + bytes(r), 0)
  );
}

/**
 * The thin event sent instead of a body over the destination's limit: the same envelope with
 * `data: null` and where to read the whole event, `GET /events?cursor=<sequence − 1>&limit=1`
 * (the event is the first one after that cursor the key can see).
 */
export function thinBody(body: string, limitBytes: number, destination: string): string {
  const event = JSON.parse(body) as Record<string, unknown>;
  const sequence = typeof event.sequence === 'number' ? event.sequence : undefined;
  return eventBody({
    ...event,
    data: null,
    thin: {
      reason: `the event is ${bytes(body)} bytes, over the ${limitBytes} bytes of ${destination}`,
      ...(sequence === undefined ? {} : { fetch: `GET /events?cursor=${sequence - 1}&limit=1` }),
    },
  });
}

/** The `sequence` a body carries (deliveries made before numbering have none). */
export function sequenceInBody(body: string): number | undefined {
  try {
    const parsed = JSON.parse(body) as { sequence?: unknown };
    return typeof parsed.sequence === 'number' ? parsed.sequence : undefined;
  } catch {
    return undefined;
  }
}
