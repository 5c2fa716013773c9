import {
  CHANGED_FIELD_NAMES,
  EVENT_TYPES,
  isEventType,
  isTracked,
  type EventType,
  type TrackedEventType,
} from './event.ts';

/*
 * Choosing events by what changed (docs/webhooks.md, "What changed"): the `types` filters of
 * GET /events, list_events and a key's `events`, by type and by the names an event's change moved
 * (`changed_fields`, which the event carries: ./event.ts).
 */

/** One entry of a `types` filter: a type, and (for a tracked type) the fields of which at least one must have changed. */
export interface TypeFilter {
  type: EventType;
  /** null: every event of the type. */
  fields: readonly string[] | null;
}

export type ParsedFilters = { ok: true; filters: TypeFilter[] } | { ok: false; message: string };

/**
 * Parses a `types` list: comma-separated entries, each an event type, or a tracked type with a
 * colon and its field names, the names going on after further commas until the next type
 * (`product.updated:price,name,order.paid`): a type always holds a dot, a field name never.
 * Repeated types merge; an entry without fields wins over one with. Answers the filters in the
 * known order, or why the list is refused (an unknown type or field, a field of no type, nothing).
 */
export function parseTypeFilters(list: string): ParsedFilters {
  const chosen = new Map<EventType, Set<string> | null>();
  let open: TrackedEventType | null = null;
  for (const token of list
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')) {
    const colon = token.indexOf(':');
    const head = colon === -1 ? token : token.slice(0, colon);
    if (!head.includes('.')) {
      if (colon !== -1 || open === null)
        return refused(`${token} is no event type (a field name follows a type and a colon: product.updated:price)`);
      const bad = unknownField(open, token);
      if (bad) return bad;
      chosen.get(open)?.add(token);
      continue;
    }
    if (!isEventType(head)) return refused(`${head} is no event type`);
    open = null;
    if (colon === -1) {
      chosen.set(head, null);
      continue;
    }
    if (!isTracked(head)) return refused(`${head} carries no changed_fields, so it takes no field list`);
    const field = token.slice(colon + 1);
    const bad = unknownField(head, field);
    if (bad) return bad;
    // An entry without fields already took every event of the type: its fields change nothing.
    const fields = chosen.has(head) ? chosen.get(head) : new Set<string>();
    fields?.add(field);
    chosen.set(head, fields ?? null);
    open = head;
  }
  if (chosen.size === 0) return refused('name at least one event type');
  const filters = EVENT_TYPES.filter((t) => chosen.has(t)).map((type) => {
    const fields = chosen.get(type);
    return { type, fields: fields ? CHANGED_FIELD_NAMES[type as TrackedEventType].filter((f) => fields.has(f)) : null };
  });
  return { ok: true, filters };
}

const KNOWN = `known types: ${EVENT_TYPES.join(', ')}`;
const refused = (why: string): ParsedFilters => ({ ok: false, message: `${why}; ${KNOWN}` });

function unknownField(type: TrackedEventType, field: string): ParsedFilters | undefined {
  const names: readonly string[] = CHANGED_FIELD_NAMES[type];
  if (names.includes(field)) return undefined;
  return { ok: false, message: `${type} has no field ${field || '(empty)'} (its fields: ${names.join(', ')})` };
}

/** The filters as one list entry per type, as a key's `events` shows and stores them: `order.paid`, `product.updated:price,name`. */
export const formatTypeFilter = (f: TypeFilter): string => (f.fields ? `${f.type}:${f.fields.join(',')}` : f.type);

/**
 * Whether an event passes the filters: its type is listed, and when fields are given, at least
 * one of them is in its `changed_fields` ("any of"). An event without `changed_fields` (logged
 * before they were recorded) passes only an entry without fields.
 */
export function passes(
  filters: readonly TypeFilter[],
  type: string,
  changed: readonly string[] | null | undefined,
): boolean {
  return filters.some((f) => f.type === type && (f.fields === null || f.fields.some((n) => changed?.includes(n))));
}
