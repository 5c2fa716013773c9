import { tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import type { TransactItem } from '../core/helpers.ts';
import {
  buildEvent,
  keyOrigin,
  ADMIN_ORIGIN,
  type EventType,
  type Origin,
  type StoreEvent,
} from '#domain/event/event.ts';
import { toProductResource, type Product } from '#domain/product/product.ts';
import { toPageResource, type Page } from '#domain/page/page.ts';

/**
 * The outbox item of an event, as one action of the change's own transaction: the change and its
 * event commit together or not at all (docs/webhooks.md, "Events"). The stream consumer numbers it.
 */
export function eventPut(event: StoreEvent): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.outboxEvent(event.store_id, event.event_id), type: ENTITY.outbox, ...event },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Products made by a key name it as their origin; those made in the store's admin, the admin. */
export const productOrigin = (p: Product): Origin =>
  p.owner_key_id === null ? ADMIN_ORIGIN : keyOrigin(p.owner_key_id);

/**
 * `product.created` / `product.updated`: the product's read shape with its offers (the currency is
 * the store's, added when the event is read). The owning key's external id rides beside the
 * payload, so only that key is shown it.
 */
export function productEvent(
  type: Extract<EventType, 'product.created' | 'product.updated'>,
  p: Product,
  origin: Origin = productOrigin(p),
): StoreEvent {
  return {
    ...buildEvent(type, p.store_id, { product: toProductResource(p, null, true) }, p.updated_at, origin),
    owner_key_id: p.owner_key_id,
    external_id: p.external_id,
  };
}

export const productEventPut = (
  type: Extract<EventType, 'product.created' | 'product.updated'>,
  p: Product,
  origin?: Origin,
) => eventPut(productEvent(type, p, origin));

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
