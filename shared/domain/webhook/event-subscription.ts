import { ORDER_EVENT_TYPES, type OrderEventType } from '../order/events.ts';

/**
 * Which events a key receives (`keys create|set-webhook --events a,b`, docs/contract.md#webhooks). A key
 * that never chose (older keys, or no `--events`) receives every order event.
 */
export const DEFAULT_EVENTS: readonly OrderEventType[] = ORDER_EVENT_TYPES;

export const isOrderEventType = (value: string): value is OrderEventType => (ORDER_EVENT_TYPES as readonly string[]).includes(value);

/** Parses `a,b,c`; throws on an unknown name or an empty list. Known order, no duplicates. */
export function parseEventTypes(csv: string): OrderEventType[] {
  const list = csv
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = list.filter((e) => !isOrderEventType(e));
  if (unknown.length > 0) throw new Error(`unknown events: ${unknown.join(', ')} (known: ${ORDER_EVENT_TYPES.join(', ')})`);
  if (list.length === 0) throw new Error(`name at least one event (known: ${ORDER_EVENT_TYPES.join(', ')})`);
  return ORDER_EVENT_TYPES.filter((e) => list.includes(e));
}

/** What a stored key item says, read leniently: a missing or unreadable list means every event. */
export function storedEvents(value: unknown): OrderEventType[] {
  if (!Array.isArray(value)) return [...DEFAULT_EVENTS];
  return ORDER_EVENT_TYPES.filter((e) => value.includes(e));
}
