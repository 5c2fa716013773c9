import { toPageResource, type Page } from '../page/page.ts';
import { buildEvent, type EventType, type Origin, type StoreEvent } from './event.ts';

/**
 * `page.published` / `page.unpublished`: the page's live read shape. As with products, the owning
 * key's external id rides beside the payload, so only that key is shown it.
 */
export function pageEvent(
  type: Extract<EventType, 'page.published' | 'page.unpublished'>,
  p: Page,
  origin: Origin,
): StoreEvent {
  return {
    ...buildEvent(type, p.store_id, { page: toPageResource(p, null) }, p.updated_at, origin),
    owner_key_id: p.owner_key_id,
    external_id: p.external_id,
  };
}
