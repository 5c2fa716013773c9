import { toPageResource, type Page } from '../page/page.ts';
import { buildEvent, changedFields, withChangedFields, type EventType, type Origin, type StoreEvent } from './event.ts';

/** What a page event compares: its content (the live version's; a draft page's own) and its status. */
const compared = (p: Page) => ({ type: p.type, title: p.title, slug: p.slug, body: p.body, status: p.status });

/**
 * `page.published` / `page.unpublished`: the page's live read shape. As with products, the owning
 * key's external id rides beside the payload, so only that key is shown it. `changed_fields`: what
 * differs from `before`, the page the action started from (a first publish moves `status` only; a
 * revision going live, the fields it changed).
 */
export function pageEvent(
  type: Extract<EventType, 'page.published' | 'page.unpublished'>,
  p: Page,
  origin: Origin,
  before: Page,
): StoreEvent {
  const event = {
    ...buildEvent(type, p.store_id, { page: toPageResource(p, null) }, p.updated_at, origin),
    owner_key_id: p.owner_key_id,
    external_id: p.external_id,
  };
  return withChangedFields(event, changedFields(type, compared(before), compared(p)));
}
