import * as v from 'valibot';
import { CURSOR } from '#domain/pagination.ts';
import { described, integerIn } from '#domain/validation.ts';
import { parseTypeFilters } from '#domain/event/changed-fields.ts';
import { EVENT_TYPES } from '#domain/event/event.ts';
import type { Args } from './args.ts';
import type { AnyOfOperation } from './operations.ts';
import type { ToolRequest, ToolSpec } from './tool-spec.ts';

/**
 * One entry of `types`: a type, or a type with its fields (`product.updated:price,name`), GET
 * /events's grammar. The types stay an enum in the tool's schema, so an agent sees them listed.
 */
const TypeFilterArg = v.union(
  [
    v.picklist(EVENT_TYPES),
    v.pipe(
      v.string(),
      v.description('A type with a colon and field names: product.updated:price,name.'),
      v.check(
        (s) => parseTypeFilters(s).ok,
        (issue) => {
          const parsed = parseTypeFilters(String(issue.input));
          return parsed.ok ? 'must be an event type' : parsed.message;
        },
      ),
    ),
  ],
  (issue) => {
    const parsed = typeof issue.input === 'string' ? parseTypeFilters(issue.input) : undefined;
    return parsed && !parsed.ok ? parsed.message : `must be one of ${EVENT_TYPES.join(', ')}, or one with fields`;
  },
);

const args = v.strictObject({
  cursor: v.optional(
    described(
      CURSOR,
      'Return events with a sequence greater than this (the previous next_cursor, or the last sequence you hold). Leave it out to start at the oldest event kept.',
    ),
  ),
  limit: v.optional(described(integerIn(1, 100), 'Page size.'), 50),
  types: v.optional(
    described(
      v.pipe(v.array(TypeFilterArg), v.minLength(1)),
      'Only events of these types (all the key can see when left out). A type that carries changed_fields may name fields after a colon, comma-separated: "product.updated:price,name" lists only product.updated events that changed at least one of them.',
    ),
  ),
  exclude_own: v.optional(described(v.boolean(), "Leave out the events this key's own writes caused."), false),
});

/** The arguments as the query of GET /events, so the endpoint validates what an HTTP client would send. */
function toQuery(a: Args): ToolRequest {
  const query: Record<string, string> = { limit: String(a.limit ?? 50), exclude_own: String(a.exclude_own ?? false) };
  if (a.cursor !== undefined) query.cursor = String(a.cursor);
  if (Array.isArray(a.types)) query.types = a.types.join(',');
  return { query };
}

/**
 * The tools of the operations open to any one of several abilities: GET /events, for a key
 * holding any read ability, which sees the events of the families it can read (docs/webhooks.md).
 */
export const ANY_OF_SPECS: Record<AnyOfOperation, ToolSpec> = {
  listEvents: {
    name: 'list_events',
    output: 'EventList',
    title: 'List store events',
    description:
      "The store's event log in ascending sequence (kept 30 days): the events of the families this key can read (orders, catalog, content). Each event has a sequence with no holes in the store's log, so a gap in what you hold names exactly what you missed. Returns {data: [{id, sequence, type, timestamp, origin, data}], next_cursor}; a cursor older than the retention is the error cursor_expired (re-read the resources, then continue without a cursor).",
    args,
    request: toQuery,
  },
};
