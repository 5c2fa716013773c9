import { ORDER_EVENT_TYPES, type EventType } from '../event/event.ts';
import { formatTypeFilter, parseTypeFilters, passes } from '../event/changed-fields.ts';

/**
 * Which events a key receives (`keys create|set-webhook --events a,b`, docs/webhooks.md). A key
 * that never chose (older keys, or no `--events`) receives every order event, as before catalog
 * and content changes raised events; a key also needs the type's read ability to receive it.
 * Each entry is a type, or a type with the fields of which one must have changed
 * (`product.updated:price,name`, docs/webhooks.md, "What changed").
 */
export const DEFAULT_EVENTS: readonly EventType[] = ORDER_EVENT_TYPES;

export const isOrderEventType = (value: string): boolean => (ORDER_EVENT_TYPES as readonly string[]).includes(value);

/**
 * Parses `a,b,c` (with field lists: `product.updated:price,name,order.paid`); throws on an unknown
 * type or field, or an empty list. One entry per type, in the known order.
 */
export function parseEventTypes(csv: string): string[] {
  const parsed = parseTypeFilters(csv);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.filters.map(formatTypeFilter);
}

/** What a stored key item says, read leniently: a missing or unreadable list means the default, an unknown entry is skipped. */
export function storedEvents(value: unknown): string[] {
  if (!Array.isArray(value)) return [...DEFAULT_EVENTS];
  const parsed = value.flatMap((entry) => {
    const one = typeof entry === 'string' ? parseTypeFilters(entry) : undefined;
    return one?.ok ? one.filters : [];
  });
  // Entries are stored one per type already; parsing them together again merges nothing new.
  const merged = parseTypeFilters(parsed.map(formatTypeFilter).join(','));
  return merged.ok ? merged.filters.map(formatTypeFilter) : [];
}

/** A key's `events` parsed once per list read, not once per event the fan-out weighs for it. */
const parsedEvents = new WeakMap<readonly string[], ReturnType<typeof parseTypeFilters>>();

/** Whether a key with these `events` receives an event of `type` that changed `changed`. */
export function subscribes(events: readonly string[], type: string, changed: readonly string[] | null | undefined) {
  let parsed = parsedEvents.get(events);
  if (!parsed) {
    parsed = parseTypeFilters(events.join(','));
    parsedEvents.set(events, parsed);
  }
  return parsed.ok && passes(parsed.filters, type, changed);
}
