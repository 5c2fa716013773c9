import { validate } from '#domain/validation.ts';
import { ListEventsQuery } from '#domain/event/list-query.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { unknownParameter } from '#http/known-parameters.ts';
import { listEvents as listStoreEvents } from '#app/events.ts';
import { isRefused, refused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { parseTypeFilters, type TypeFilter } from '#domain/event/changed-fields.ts';

const KNOWN = ['cursor', 'limit', 'types', 'exclude_own'];

/** GET /events: the store's event log after `cursor` (docs/webhooks.md, "How to never miss an event"). */
export const listEvents: RouteFn = async (ctx, { principal, query }) => {
  const unknown = unknownParameter(query, KNOWN);
  if (unknown) return problemResult(unknown);
  const q = validate(ListEventsQuery, query);
  if (isRefused(q)) return problemResult(q);
  let types: TypeFilter[] | undefined;
  if (q.types !== undefined) {
    const parsed = parseTypeFilters(q.types);
    if (!parsed.ok) return problemResult(refused('validation_failed', parsed.message, 'types'));
    types = parsed.filters;
  }
  const page = await listStoreEvents(ctx, principal, {
    cursor: q.cursor,
    limit: q.limit,
    types,
    excludeOwn: q.exclude_own === 'true',
  });
  return isRefused(page) ? problemResult(page) : { body: page };
};
