import { canSee, causedBy, ORDER_EVENT_TYPES, type EventType, type Origin } from '../event/event.ts';
import { formatTypeFilter, parseTypeFilters, passes } from '../event/changed-fields.ts';

/**
 * Which events a key receives (`keys create|set-webhook --events a,b`, docs/webhooks.md). A key
 * that never chose (older keys, or no `--events`) receives every order event, as before catalog
 * and content changes raised events; a key also needs the type's read ability to receive it.
 * Each entry is a type, or a type with the fields of which one must have changed
 * (`product.updated:price,name`, docs/webhooks.md, "What changed").
 */
export const DEFAULT_EVENTS: readonly EventType[] = ORDER_EVENT_TYPES;

/**
 * Parses `a,b,c` (with field lists: `product.updated:price,name,order.paid`): one entry per type,
 * in the known order, or what is wrong (an unknown type or field, an empty list).
 */
export function parseEventTypes(csv: string): { ok: true; value: string[] } | { ok: false; message: string } {
  const parsed = parseTypeFilters(csv);
  return parsed.ok ? { ok: true, value: parsed.filters.map(formatTypeFilter) } : parsed;
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

/**
 * Whether a key receives an event (the fan-out's choice, made again by an ordered destination's run
 * for an event it reaches before the fan-out did: shared/app/ordered-delivery.ts): it may read the
 * family, chose the type (and a changed field, when it named some), and did not cause it with
 * `exclude_own`.
 */
export function receives(
  key: { id: number; abilities: readonly string[]; events: readonly string[]; exclude_own: boolean },
  event: { event_type: string; changed_fields: readonly string[] | null | undefined; origin: Origin | null },
): boolean {
  return (
    canSee(key.abilities, event.event_type) &&
    subscribes(key.events, event.event_type, event.changed_fields) &&
    !(key.exclude_own && causedBy(event.origin, key.id))
  );
}
