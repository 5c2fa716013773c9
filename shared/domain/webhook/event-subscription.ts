import { EVENT_TYPES, ORDER_EVENT_TYPES, isEventType, type EventType } from '../event/event.ts';

/**
 * Which events a key receives (`keys create|set-webhook --events a,b`, docs/webhooks.md). A key
 * that never chose (older keys, or no `--events`) receives every order event, as before catalog
 * and content changes raised events; a key also needs the type's read ability to receive it.
 */
export const DEFAULT_EVENTS: readonly EventType[] = ORDER_EVENT_TYPES;

export const isOrderEventType = (value: string): boolean => (ORDER_EVENT_TYPES as readonly string[]).includes(value);

/** Parses `a,b,c`; throws on an unknown name or an empty list. Known order, no duplicates. */
export function parseEventTypes(csv: string): EventType[] {
  const list = csv
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = list.filter((e) => !isEventType(e));
  if (unknown.length > 0) throw new Error(`unknown events: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`);
  if (list.length === 0) throw new Error(`name at least one event (known: ${EVENT_TYPES.join(', ')})`);
  return EVENT_TYPES.filter((e) => list.includes(e));
}

/** What a stored key item says, read leniently: a missing or unreadable list means the default. */
export function storedEvents(value: unknown): EventType[] {
  if (!Array.isArray(value)) return [...DEFAULT_EVENTS];
  return EVENT_TYPES.filter((e) => value.includes(e));
}
