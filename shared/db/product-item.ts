import { tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import type { Item, TransactItem } from './helpers.ts';
import type { Offer, Product } from '#domain/product/product.ts';

/**
 * How a product is stored: its own item (STORE#{s} / PRODUCT#{id}, what reads and the list use)
 * and, for a product written through the API, a copy inside its external-id link item
 * (KEY#{k} / XID#product#{external_id}, attribute `product`). Every product write puts the copy
 * in the same transaction as the product, so the one BatchGetItem a write starts with already
 * holds the state it changes. Links written before the copy existed carry only `record_id`;
 * the next write of their product adds it.
 */

export function toProduct(item: Item): Product {
  return {
    id: item.id,
    store_id: item.store_id,
    external_id: item.external_id ?? null,
    owner_key_id: item.owner_key_id ?? null,
    name: item.name,
    description: item.description ?? '',
    status: item.status,
    image_url: item.image_url ?? null,
    category_ids: item.category_ids ?? [],
    category_external_ids: item.category_external_ids ?? [],
    tag_external_ids: item.tag_external_ids ?? [],
    offers: (item.offers ?? []).map(
      (o: Item): Offer => ({
        id: o.id,
        sku: o.sku ?? null,
        price: o.price,
        quantity: o.quantity,
        // DynamoDB keeps no key order inside a map: name and value first, as they were written.
        properties: ((o.properties ?? []) as Item[]).map((p) => ({ name: p.name, value: p.value, ...p })),
        weight: o.weight ?? null,
        length: o.length ?? null,
        height: o.height ?? null,
        width: o.width ?? null,
      }),
    ),
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

export function productItem(p: Product): Item {
  return { ...keys.product(p.store_id, p.id), type: ENTITY.product, ...p };
}

/** The external-id link of an API product, carrying a copy of it; undefined for a store-admin product. */
export function linkItem(p: Product): Item | undefined {
  if (p.external_id === null || p.owner_key_id === null) return undefined;
  return {
    ...keys.externalId(p.owner_key_id, 'product', p.external_id),
    type: ENTITY.externalId,
    record_id: p.id,
    product: p,
  };
}

/** What a link item says: the product id, and the product when the link carries its copy. */
export function readLink(item: Item | undefined): { productId: number | undefined; product: Product | undefined } {
  if (!item) return { productId: undefined, product: undefined };
  return { productId: Number(item.record_id), product: item.product ? toProduct(item.product as Item) : undefined };
}

/**
 * The link of a new product, for the transaction that inserts it: guarded, so exactly one
 * product exists per external id however many PUTs race. Its cancellation reason hands back the
 * link that won (with its product copy).
 */
export function newLinkWrite(p: Product): TransactItem | undefined {
  const Item = linkItem(p);
  if (!Item) return undefined;
  return {
    Put: {
      TableName: tableName(),
      Item,
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** The link's copy brought up to `p`, for the transaction that changes the product (unguarded: the product item carries the guard). */
export function linkCopyWrite(p: Product): TransactItem | undefined {
  const Item = linkItem(p);
  return Item ? { Put: { TableName: tableName(), Item } } : undefined;
}
