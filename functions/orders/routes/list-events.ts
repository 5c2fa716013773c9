import { validate } from '#domain/validation.ts';
import { validationFailed } from '#domain/errors.ts';
import { ListEventsQuery } from '#domain/event/list-query.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { onlyKnownParameters } from '#http/known-parameters.ts';
import { listEvents as listStoreEvents } from '#app/events.ts';
import { isRefused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { parseTypeFilters, type TypeFilter } from '#domain/event/changed-fields.ts';

const KNOWN = ['cursor', 'limit', 'types', 'exclude_own'];

/** GET /events: the store's event log after `cursor` (docs/webhooks.md, "How to never miss an event"). */
export const listEvents: RouteFn = async (ctx, { principal, query }) => {
  onlyKnownParameters(query, KNOWN);
  const q = validate(ListEventsQuery, query);
  if (isRefused(q)) return problemResult(q);
  let types: TypeFilter[] | undefined;
  if (q.types !== undefined) {
    const parsed = parseTypeFilters(q.types);
    if (!parsed.ok) throw validationFailed('types', parsed.message);
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
