import { backoff, done, retryOnStale, stale } from '../domain/retry.ts';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { batchGet, cancellationReasons, isConditionalCheckFailed, itemFromError, itemKey, type Item, type TransactItem } from './helpers.ts';
import type { Offer, Product } from '../domain/product/product.ts';
import { denseIdsOfPage } from '../domain/pagination.ts';
import { indexWrites } from './product-index.repo.ts';
import { externalIdMapWrite } from './product-refs.repo.ts';
import { productCountMove, reserveProductIds } from './product-sequence.ts';

/**
 * Products have dense ids 1..n per store (the id sequence moves in the same transaction that
 * inserts the product), so page p of the list is exactly the ids (p-1)*l+1..p*l and the total
 * is the sequence value: a list page is one BatchGetItem, whatever the size of the store.
 */

function toProduct(item: Item): Product {
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

// ---- writes --------------------------------------------------------------------------------

export class ExternalIdTakenError extends Error {
  constructor(readonly productId: number | undefined) {
    super('external id already maps to a product');
  }
}

/**
 * Inserts a new product with the next dense id. One UpdateItem reserves offer ids and reads the
 * sequence; one transaction moves the sequence (guarded), writes the product, its external-id map
 * (guarded: exactly one product per external id, however many PUTs race) and its indexes.
 */
export async function insertProduct(
  draft: Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] },
): Promise<Product> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const { count, firstOffer } = await reserveProductIds(draft.store_id, draft.offers.length);
    const product: Product = { ...draft, id: count + 1, offers: draft.offers.map((o, i) => ({ ...o, id: firstOffer + i })) };
    const items: TransactItem[] = [
      productCountMove(draft.store_id, count, 1),
      { Put: { TableName: tableName(), Item: productItem(product), ConditionExpression: 'attribute_not_exists(pk)' } },
      ...indexWrites(product),
    ];
    if (product.external_id !== null && product.owner_key_id !== null) {
      items.push(externalIdMapWrite(product.owner_key_id, product.external_id, product.id));
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
      if (attempt > 2) await backoff(attempt);
    }
  }
  throw new Error('could not allocate a product id under contention');
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
  return retryOnStale<Product | undefined, Product | undefined>({
    what: `product ${id} of store ${storeId}`,
    read: () => getProduct(storeId, id),
    round: async (current) => {
      if (!current) return done(undefined);
      const next = await change(current);
      if (!next) return done(current);
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
        return done(next);
      } catch (err) {
        if (isConditionalCheckFailed(err)) return stale();
        const reasons = cancellationReasons(err);
        if (!reasons || reasons.some((r) => r.Code !== undefined && !RETRYABLE_REASONS.has(r.Code))) throw err;
        // Someone changed the product (or an index item) first: back off a little, re-read, re-apply.
        return stale();
      }
    },
  });
}
