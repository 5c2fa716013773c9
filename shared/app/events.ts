import type { RequestContext } from '#shared/context.ts';
import { readEventLog } from '#db/event/log.repo.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { canSee, causedBy, eventView, type EventView } from '#domain/event/event.ts';
import { passes, type TypeFilter } from '#domain/event/changed-fields.ts';
import type { Principal } from '#domain/principal.ts';

export interface EventListDocument {
  data: EventView[];
  next_cursor: number | null;
}

/**
 * Log Queries one request may make to fill a page the filters thinned (the first is the usual case).
 * When all of them find nothing the key may see, the page is empty and `next_cursor` still moves on
 * (docs/webhooks.md, "Empty pages"): the bound keeps a request's reads fixed however long the run of
 * other families' events.
 */
export const MAX_QUERIES = 5;

/**
 * `GET /events` (docs/webhooks.md, "How to never miss an event"): the store's numbered events
 * after `cursor`, ascending, those of the families the key can read, passing `types` if given, and
 * without the key's own changes with `excludeOwn`. A cursor whose next event has expired is 410
 * `cursor_expired`: the client re-syncs from the resources. `next_cursor` is the last sequence
 * looked at when more may follow (filtered-out events included, so the next page starts past them).
 */
export async function listEvents(
  ctx: RequestContext,
  principal: Pick<Principal, 'keyId' | 'storeId' | 'abilities'>,
  params: { cursor: number | undefined; limit: number; types: readonly TypeFilter[] | undefined; excludeOwn: boolean },
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<EventListDocument | Refused> {
  const data: EventView[] = [];
  let after = params.cursor ?? 0;
  let more = true;
  for (let query = 0; query < MAX_QUERIES && more && data.length < params.limit; query++) {
    const page = await readEventLog(
      ctx,
      principal.storeId,
      after,
      params.limit - data.length,
      nowSeconds,
      query === 0 && params.cursor !== undefined,
    );
    if (query === 0 && params.cursor !== undefined && page.expired)
      return refused(
        'cursor_expired',
        `Events after ${params.cursor} are no longer kept (30 days); re-sync and start again without a cursor.`,
        'cursor',
      );
    for (const e of page.events) {
      after = e.sequence;
      if (!canSee(principal.abilities, e.event_type)) continue;
      if (params.types && !passes(params.types, e.event_type, e.payload.changed_fields)) continue;
      if (params.excludeOwn && causedBy(e.origin, principal.keyId)) continue;
      data.push(eventView(e, principal.keyId));
    }
    more = page.more;
  }
  return { data, next_cursor: more ? after : null };
}
