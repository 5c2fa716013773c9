import { backoff, done, retryOnStale, stale } from '../domain/retry.ts';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { batchGet, cancellationReasons, isConditionalCheckFailed, itemFromError, itemKey, type TransactItem } from './helpers.ts';
import type { Offer, Product } from '../domain/product/product.ts';
import { denseIdsOfPage } from '../domain/pagination.ts';
import { indexWrites } from './product-index.repo.ts';
import { linkCopyWrite, newLinkWrite, productItem, readLink, toProduct } from './product-item.ts';
import { productSequenceMove, readProductSequence, type ProductSequence } from './product-sequence.ts';

/**
 * Products have dense ids 1..n per store (the id sequence moves in the same transaction that
 * inserts the product), so page p of the list is exactly the ids (p-1)*l+1..p*l and the total
 * is the sequence value: a list page is one BatchGetItem, whatever the size of the store.
 */

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
  /** The product that won, as its link's copy holds it (absent on a link written before copies). */
  constructor(
    readonly productId: number | undefined,
    readonly product?: Product,
  ) {
    super('external id already maps to a product');
  }
}

/**
 * Inserts a new product with the next dense id: one transaction moves the sequence (guarded on
 * `sequence`, the state read; read here when the caller has none), writes the product, its
 * external-id link with the product's copy (guarded: exactly one product per external id,
 * however many PUTs race) and its indexes. A lost race for the sequence re-reads it and retries.
 */
export async function insertProduct(
  draft: Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] },
  sequence?: ProductSequence,
): Promise<Product> {
  let read = sequence;
  for (let attempt = 0; attempt < 50; attempt++) {
    read ??= await readProductSequence(draft.store_id);
    const product: Product = { ...draft, id: read.count + 1, offers: draft.offers.map((o, i) => ({ ...o, id: read!.offers + 1 + i })) };
    const link = newLinkWrite(product);
    const items: TransactItem[] = [
      productSequenceMove(draft.store_id, read, 1, product.offers.length),
      { Put: { TableName: tableName(), Item: productItem(product), ConditionExpression: 'attribute_not_exists(pk)' } },
      ...indexWrites(product),
      ...(link ? [link] : []),
    ];
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return product;
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      const lost = link ? reasons[items.length - 1] : undefined;
      if (lost?.Code === 'ConditionalCheckFailed') {
        const winner = readLink(itemFromError(lost.Item));
        throw new ExternalIdTakenError(winner.productId, winner.product);
      }
      // The sequence moved (a concurrent insert) or the transaction conflicted: read it again, take the next id.
      read = undefined;
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
 * newer state. Product, its link's copy, name index and SKU links change in one transaction.
 * Returns undefined when the product does not exist.
 *
 * Only the fields a write may touch are SET, so attributes this module does not know survive.
 */
export async function modifyProduct(
  storeId: string,
  id: number,
  change: (current: Product) => Product | null | Promise<Product | null>,
  known?: Product,
): Promise<Product | undefined> {
  // Every round commits at least one contender, so N racing writers need at most ~N rounds each.
  return retryOnStale<Product | undefined, Product | undefined>({
    what: `product ${id} of store ${storeId}`,
    // `known`: the state the link's copy held. If that copy is behind the product (written by an
    // older version), the guard fails and the next round reads the product item itself.
    ...(known ? { initial: known } : {}),
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
      const copy = linkCopyWrite(next);
      if (copy) items.push(copy);
      try {
        // A store-admin product (no link copy) whose change touches no index is a single
        // conditional UpdateItem: half the write units of a one-item transaction, same guarantee.
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
