import { toProductResource, type Offer, type Product } from '../product/product.ts';
import { writeShape } from '../product/checksum.ts';
import {
  ADMIN_ORIGIN,
  buildEvent,
  changedFields,
  keyOrigin,
  withChangedFields,
  type EventType,
  type Origin,
  type StoreEvent,
} from './event.ts';

/** Products made by a key name it as their origin; those made in the store's admin, the admin. */
const productOrigin = (p: Product): Origin => (p.owner_key_id === null ? ADMIN_ORIGIN : keyOrigin(p.owner_key_id));

/**
 * `product.created` / `product.updated`: the product's read shape with its offers (the currency is
 * the store's, added when the event is read). The owning key's external id rides beside the
 * payload, so only that key is shown it.
 */
export function productEvent(type: 'product.created', p: Product, origin?: Origin): StoreEvent;
/** `product.updated` also names the write-shape fields that differ from `before` (`changed_fields`). */
export function productEvent(
  type: 'product.updated',
  p: Product,
  origin: Origin | undefined,
  before: Product,
): StoreEvent;
export function productEvent(
  type: Extract<EventType, 'product.created' | 'product.updated'>,
  p: Product,
  origin: Origin = productOrigin(p),
  before?: Product,
): StoreEvent {
  const event = {
    ...buildEvent(type, p.store_id, { product: toProductResource(p, null, true) }, p.updated_at, origin),
    owner_key_id: p.owner_key_id,
    external_id: p.external_id,
  };
  if (type === 'product.created' || !before) return event;
  const changed = changedFields(type, { ...writeShape(before) }, { ...writeShape(p) });
  return withChangedFields(event, changed);
}

/**
 * `product.stock_changed`: a stock delta moved one variant's quantity. Apart from
 * `product.updated` (which a stock delta does not raise), so stock-only changes can be subscribed
 * to or left out. `data.product` is the product after it, as in product.updated; the variant,
 * the delta and the new quantity are plain values beside it.
 */
export function stockChangedEvent(p: Product, offer: Offer, delta: number, origin: Origin): StoreEvent {
  const data = {
    product: toProductResource(p, null, true),
    variant_id: offer.id,
    sku: offer.sku,
    delta,
    quantity: offer.quantity,
  };
  return {
    ...buildEvent('product.stock_changed', p.store_id, data, p.updated_at, origin),
    owner_key_id: p.owner_key_id,
    external_id: p.external_id,
  };
}

/**
 * `category.upserted` / `tag.upserted`: the record without its external id, which rides beside for
 * its key alone; `changed_fields` against `before` (undefined: created, so its name or value).
 */
export function taxonomyEvent(
  type: Extract<EventType, 'category.upserted' | 'tag.upserted'>,
  storeId: string,
  keyId: number,
  externalId: string,
  record: Record<string, unknown> & { updated_at: string },
  before: Record<string, unknown> | undefined,
): StoreEvent {
  const data = { [type === 'category.upserted' ? 'category' : 'tag']: record };
  const event = {
    ...buildEvent(type, storeId, data, record.updated_at, keyOrigin(keyId)),
    owner_key_id: keyId,
    external_id: externalId,
  };
  return withChangedFields(event, changedFields(type, before, record));
}
