import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { batchGet, cancellationReasons, isConditionalCheckFailed, itemFromError, itemKey, queryAll, type Item } from './helpers.ts';
import { normalizeName, type Offer, type Product } from '../domain/product/product.ts';
import { denseIdsOfPage } from '../domain/pagination.ts';

/**
 * Products have dense ids 1..n per store (the id sequence moves in the same transaction that
 * inserts the product), so page p of the list is exactly the ids (p-1)*l+1..p*l and the total
 * is the sequence value: a list page is one BatchGetItem, whatever the size of the store.
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

export async function getProduct(storeId: string, id: number): Promise<Product | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.product(storeId, id), ConsistentRead: true }));
  return out.Item ? toProduct(out.Item) : undefined;
}

export async function getProductsByIds(storeId: string, ids: number[]): Promise<Product[]> {
  if (ids.length === 0) return [];
  const found = await batchGet(ids.map((id) => keys.product(storeId, id)));
  return ids.flatMap((id) => {
    const item = found.get(itemKey(keys.product(storeId, id)));
    return item ? [toProduct(item)] : [];
  });
}

/** Page `page` of the unfiltered list and the store's product count, in one round trip. */
export async function getDensePage(storeId: string, page: number, limit: number): Promise<{ products: Product[]; total: number }> {
  const ids = denseIdsOfPage(page, limit);
  const seqKey = keys.sequence(storeId, 'product');
  const found = await batchGet([seqKey, ...ids.map((id) => keys.product(storeId, id))]);
  const total = Number(found.get(itemKey(seqKey))?.value ?? 0);
  const products = ids.flatMap((id) => {
    const item = found.get(itemKey(keys.product(storeId, id)));
    return item ? [toProduct(item)] : [];
  });
  return { products, total };
}

/** Ids of products with a variant whose SKU is exactly `sku`, ascending. */
export async function productIdsBySku(storeId: string, sku: string): Promise<number[]> {
  const items = await queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.skuPartition(storeId, sku) },
    ProjectionExpression: 'product_id',
    ConsistentRead: true,
  });
  return items.map((i) => Number(i.product_id)).sort((a, b) => a - b);
}

/**
 * Ids of products whose name contains `needle` (case-insensitive), ascending. Reads the compact
 * name index (1000 names an item), not the products: ~1 read unit per 4 KB of names.
 */
export async function productIdsByName(storeId: string, needle: string): Promise<number[]> {
  const wanted = normalizeName(needle);
  const chunks = await queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': `STORE#${storeId}`, ':prefix': keys.productNamesPrefix },
    ConsistentRead: true,
  });
  const ids: number[] = [];
  for (const chunk of chunks) {
    for (const [attr, value] of Object.entries(chunk)) {
      if (/^n\d+$/.test(attr) && typeof value === 'string' && value.includes(wanted)) ids.push(Number(attr.slice(1)));
    }
  }
  return ids.sort((a, b) => a - b);
}

// ---- writes --------------------------------------------------------------------------------

export class ExternalIdTakenError extends Error {
  constructor(readonly productId: number | undefined) {
    super('external id already maps to a product');
  }
}

type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/** The writes that keep the name index and SKU links in step with a product (insert or change). */
export function indexWrites(next: Product, previous?: Product): TransactItem[] {
  const writes: TransactItem[] = [];
  if (!previous || normalizeName(previous.name) !== normalizeName(next.name)) {
    writes.push({
      Update: {
        TableName: tableName(),
        Key: keys.productNames(next.store_id, keys.productNamesChunkOf(next.id)),
        UpdateExpression: 'SET #n = :name, #t = :type',
        ExpressionAttributeNames: { '#n': keys.productNameAttribute(next.id), '#t': 'type' },
        ExpressionAttributeValues: { ':name': normalizeName(next.name), ':type': ENTITY.productNames },
      },
    });
  }
  const skus = (p?: Product) => new Set((p?.offers ?? []).map((o) => o.sku).filter((s): s is string => !!s));
  const before = skus(previous);
  const after = skus(next);
  for (const sku of after) {
    if (!before.has(sku)) {
      writes.push({
        Put: {
          TableName: tableName(),
          Item: { ...keys.skuLink(next.store_id, sku, next.id), type: ENTITY.skuLink, product_id: next.id },
        },
      });
    }
  }
  for (const sku of before) {
    if (!after.has(sku)) writes.push({ Delete: { TableName: tableName(), Key: keys.skuLink(next.store_id, sku, next.id) } });
  }
  return writes;
}

/**
 * Inserts a new product with the next dense id. One UpdateItem reserves offer ids and reads the
 * sequence; one transaction moves the sequence (guarded), writes the product, its external-id map
 * (guarded: exactly one product per external id, however many PUTs race) and its indexes.
 */
export async function insertProduct(
  draft: Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] },
): Promise<Product> {
  const seqKey = keys.sequence(draft.store_id, 'product');
  for (let attempt = 0; attempt < 50; attempt++) {
    const reserved = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: seqKey,
        UpdateExpression: 'ADD offer_seq :n SET #t = :type',
        ExpressionAttributeNames: { '#t': 'type' },
        ExpressionAttributeValues: { ':n': draft.offers.length, ':type': ENTITY.sequence },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const count = Number(reserved.Attributes?.value ?? 0);
    const lastOffer = Number(reserved.Attributes?.offer_seq ?? 0);
    const firstOffer = lastOffer - draft.offers.length + 1;
    const product: Product = { ...draft, id: count + 1, offers: draft.offers.map((o, i) => ({ ...o, id: firstOffer + i })) };
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: seqKey,
          UpdateExpression: 'SET #v = :next',
          ConditionExpression: count === 0 ? 'attribute_not_exists(#v)' : '#v = :count',
          ExpressionAttributeNames: { '#v': 'value' },
          ExpressionAttributeValues: count === 0 ? { ':next': count + 1 } : { ':next': count + 1, ':count': count },
        },
      },
      { Put: { TableName: tableName(), Item: productItem(product), ConditionExpression: 'attribute_not_exists(pk)' } },
      ...indexWrites(product),
    ];
    if (product.external_id !== null && product.owner_key_id !== null) {
      items.push({
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.externalId(product.owner_key_id, 'product', product.external_id),
            type: ENTITY.externalId,
            record_id: product.id,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      });
    }
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return product;
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      const xid = product.external_id !== null ? reasons[items.length - 1] : undefined;
      if (xid?.Code === 'ConditionalCheckFailed') {
        throw new ExternalIdTakenError(itemFromError(xid.Item)?.record_id as number | undefined);
      }
      // The sequence moved (a concurrent insert) or the transaction conflicted: take the next id.
      if (attempt > 2) await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
  throw new Error('could not allocate a product id under contention');
}

/** The product id an external id of this key maps to. */
export async function productIdForExternalId(keyId: number, externalId: string): Promise<number | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.externalId(keyId, 'product', externalId), ConsistentRead: true }),
  );
  return out.Item ? Number(out.Item.record_id) : undefined;
}

// ---- catalog writes (PUT/PATCH /catalog/products/{external_id}) -----------------------------

export interface WriteTargets {
  /** The product this key's external id addresses, if any. */
  productId: number | undefined;
  /** Ids of the named categories, in order (only when all exist). */
  categoryIds: number[];
  /** The first reference that does not exist for this key, e.g. `{ list: 'tag', index: 2 }`. */
  missing: { list: 'category' | 'tag'; index: number } | undefined;
}

/**
 * Everything a product write must know before it changes anything, in one BatchGetItem: the
 * external-id map entry and the key's categories and tags it references.
 */
export async function resolveWriteTargets(
  keyId: number,
  externalId: string,
  categoryExternalIds: string[] = [],
  tagExternalIds: string[] = [],
): Promise<WriteTargets> {
  const xidKey = keys.externalId(keyId, 'product', externalId);
  const categoryKeys = categoryExternalIds.map((x) => keys.category(keyId, x));
  const tagKeys = tagExternalIds.map((x) => keys.tag(keyId, x));
  const found = await batchGet([xidKey, ...categoryKeys, ...tagKeys]);
  const mapped = found.get(itemKey(xidKey));
  const categoryIds: number[] = [];
  let missing: WriteTargets['missing'];
  for (const [index, k] of categoryKeys.entries()) {
    const item = found.get(itemKey(k));
    if (!item) {
      missing = { list: 'category', index };
      break;
    }
    categoryIds.push(Number(item.id));
  }
  if (!missing) {
    const index = tagKeys.findIndex((k) => !found.has(itemKey(k)));
    if (index >= 0) missing = { list: 'tag', index };
  }
  return { productId: mapped ? Number(mapped.record_id) : undefined, categoryIds, missing };
}

/** One fresh variant id from the store's offer sequence (the rare product that has no variant). */
export async function reserveOfferId(storeId: string): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.sequence(storeId, 'product'),
      UpdateExpression: 'ADD offer_seq :one SET #t = :type',
      ExpressionAttributeNames: { '#t': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': ENTITY.sequence },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.offer_seq);
}

const RETRYABLE_REASONS = new Set(['None', 'ConditionalCheckFailed', 'TransactionConflict']);

/**
 * Optimistic read-modify-write of one product. `change` gets the latest stored state and returns
 * the next one, or null for "nothing to change". The write is guarded on the `updated_at` that
 * was read (which strictly increases on every change, see nextUpdatedAt), so a concurrent
 * writer is never overwritten silently: the loser re-reads and `change` is applied again to the
 * newer state. Product, name index and SKU links change in one transaction. Returns undefined
 * when the product does not exist.
 *
 * Only the fields a write may touch are SET, so attributes this module does not know survive.
 */
export async function modifyProduct(
  storeId: string,
  id: number,
  change: (current: Product) => Product | null | Promise<Product | null>,
): Promise<Product | undefined> {
  // Every round commits at least one contender, so N racing writers need at most ~N rounds each.
  for (let attempt = 0; attempt < 50; attempt++) {
    const current = await getProduct(storeId, id);
    if (!current) return undefined;
    const next = await change(current);
    if (!next) return current;
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.product(storeId, id),
          UpdateExpression:
            'SET #name = :name, description = :description, #status = :status, image_url = :image_url, ' +
            'category_ids = :category_ids, category_external_ids = :category_external_ids, ' +
            'tag_external_ids = :tag_external_ids, offers = :offers, updated_at = :updated_at',
          ConditionExpression: 'updated_at = :previous',
          ExpressionAttributeNames: { '#name': 'name', '#status': 'status' },
          ExpressionAttributeValues: {
            ':name': next.name,
            ':description': next.description,
            ':status': next.status,
            ':image_url': next.image_url,
            ':category_ids': next.category_ids,
            ':category_external_ids': next.category_external_ids,
            ':tag_external_ids': next.tag_external_ids,
            ':offers': next.offers,
            ':updated_at': next.updated_at,
            ':previous': current.updated_at,
          },
        },
      },
      ...indexWrites(next, current),
    ];
    try {
      // A change that touches no index is a single conditional UpdateItem: half the write units
      // of a one-item transaction, same guarantee.
      const only = items.length === 1 ? items[0]?.Update : undefined;
      if (only) await db().send(new UpdateCommand(only));
      else await db().send(new TransactWriteCommand({ TransactItems: items }));
      return next;
    } catch (err) {
      if (isConditionalCheckFailed(err)) {
        await new Promise((r) => setTimeout(r, Math.random() * 10 * Math.min(attempt + 1, 10)));
        continue;
      }
      const reasons = cancellationReasons(err);
      if (!reasons || reasons.some((r) => r.Code !== undefined && !RETRYABLE_REASONS.has(r.Code))) throw err;
      // Someone changed the product (or an index item) first: back off a little, re-read, re-apply.
      await new Promise((r) => setTimeout(r, Math.random() * 10 * Math.min(attempt + 1, 10)));
    }
  }
  throw new Error(`product ${id} kept changing under contention`);
}
