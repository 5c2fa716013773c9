import { parse } from '#domain/validation.ts';
import { validationFailed } from '#domain/errors.ts';
import { ListEventsQuery } from '#domain/event/list-query.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { listEvents as listStoreEvents } from '#app/events.ts';
import { EVENT_TYPES, isEventType } from '#domain/event/event.ts';

const KNOWN = ['cursor', 'limit', 'types', 'exclude_own'];

/** GET /events: the store's event log after `cursor` (docs/webhooks.md, "How to never miss an event"). */
export const listEvents: RouteFn = async ({ principal, query }) => {
  const unknown = Object.keys(query).find((k) => !KNOWN.includes(k));
  if (unknown) throw validationFailed(unknown, `${unknown} is not a known parameter (${KNOWN.join(', ')})`);
  const q = parse(ListEventsQuery, query);
  let types: string[] | undefined;
  if (q.types !== undefined) {
    types = q.types
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
    const bad = types.find((t) => !isEventType(t));
    if (bad !== undefined || types.length === 0)
      throw validationFailed('types', `name event types from: ${EVENT_TYPES.join(', ')}`);
  }
  return {
    body: await listStoreEvents(principal, {
      cursor: q.cursor,
      limit: q.limit,
      types,
      excludeOwn: q.exclude_own === 'true',
    }),
  };
};
