import { contended, done, retryOnStale, stale, undetermined } from '#domain/time.ts';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys, type Key } from '../keys.ts';
import { batchGet, cancellationReasons, itemKey, type Item, type TransactItem } from '../core/helpers.ts';
import type { Product } from '#domain/product/product.ts';
import { indexWrites } from './index.repo.ts';
import { getProduct, linkCopyWrite, readLink, toProduct } from './item.ts';
import {
  idsAtPositions,
  productCount,
  productSequenceKey,
  readProductSequence,
  sequenceOf,
  type ProductSequence,
} from '../core/sequence.ts';
import { ProductIds, type NewProduct } from './batch.repo.ts';
import { productEventPut } from '../event/item.ts';
import type { Origin } from '#domain/event/event.ts';

/**
 * Products have dense ids 1..n per store (the id sequence moves in the same transaction that
 * inserts the product), so page p of the list is exactly the ids (p-1)*l+1..p*l and the total
 * is the sequence value: a list page is one BatchGetItem, whatever the size of the store.
 */

/** `found` plus, read strongly, the keys of `wanted` it lacks (an eventually consistent read may not see an item just written). */
async function completeStrongly(found: Map<string, Item>, wanted: Key[]): Promise<Map<string, Item>> {
  const missing = wanted.filter((k) => !found.has(itemKey(k)));
  if (missing.length > 0) for (const [k, item] of await batchGet(missing)) found.set(k, item);
  return found;
}

export async function getProductsByIds(storeId: string, ids: number[], consistent = false): Promise<Product[]> {
  if (ids.length === 0) return [];
  const wanted = ids.map((id) => keys.product(storeId, id));
  const found = await completeStrongly(await batchGet(wanted, consistent), wanted);
  return ids.flatMap((id) => {
    const item = found.get(itemKey(keys.product(storeId, id)));
    return item ? [toProduct(item)] : [];
  });
}

/**
 * Page `page` of the unfiltered list and the store's product count. Ids are dense but for the
 * gaps the sequence records, so the page is the ids at its positions: one BatchGetItem (the
 * sequence and the ids of the page as if there were no gap), and a second one only when gaps
 * at or below the page move it onto ids not read yet. Eventually consistent like getProduct: a
 * product created a moment ago may be missing from the count and the last page for as long.
 */
export async function getDensePage(
  storeId: string,
  page: number,
  limit: number,
): Promise<{ products: Product[]; total: number }> {
  const first = (page - 1) * limit + 1;
  const guess = idsAtPositions(first, limit, []);
  const seqKey = productSequenceKey(storeId);
  const found = await batchGet([seqKey, ...guess.map((id) => keys.product(storeId, id))], false);
  const sequence = sequenceOf(found.get(itemKey(seqKey)));
  const ids = idsAtPositions(first, limit, sequence.gaps).filter((id) => id <= sequence.last);
  const unread = ids.filter((id) => !guess.includes(id));
  if (unread.length > 0)
    for (const [k, item] of await batchGet(
      unread.map((id) => keys.product(storeId, id)),
      false,
    ))
      found.set(k, item);
  await completeStrongly(
    found,
    ids.map((id) => keys.product(storeId, id)),
  );
  const products = ids.flatMap((id) => {
    const item = found.get(itemKey(keys.product(storeId, id)));
    return item ? [toProduct(item)] : [];
  });
  return { products, total: productCount(sequence) };
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
 * Inserts a new product: its id from `ids` (the request's id source: the sequence state read
 * with the write's targets, or after a lost race a reserved block), in one transaction with its
 * external-id link and copy (guarded: exactly one product per external id, however many PUTs
 * race) and its indexes. A racing write that created the external id first is
 * `ExternalIdTakenError` carrying the winner; a request out of time is `contended`, retryable:
 * either way nothing was written.
 */
export async function insertProduct(draft: NewProduct, ids?: ProductIds): Promise<Product> {
  if (!ids) {
    // A caller outside a request (seed, tests): a source of its own, its gaps recorded at once.
    const own = productIdsFor(draft.store_id, undefined);
    try {
      return await insertProduct(draft, own);
    } finally {
      await own.finish();
    }
  }
  const outcome = await ids.insert([draft]);
  if (outcome.kind === 'inserted') return outcome.products[0] as Product;
  if (outcome.kind === 'external_id_taken') {
    const winner = readLink(outcome.winner);
    throw new ExternalIdTakenError(winner.productId, winner.product);
  }
  const what = `the product with external id ${draft.external_id ?? ''}`;
  throw outcome.kind === 'undetermined' ? undetermined(what) : contended(what);
}

/** An id source for one request that inserts at most a product or two (a PUT). */
export const productIdsFor = (storeId: string, read: ProductSequence | undefined) =>
  new ProductIds(storeId, read, () => readProductSequence(storeId));

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
  origin?: Origin,
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
      // The change and its event commit together; a change to nothing (above) raises none.
      items.push(productEventPut('product.updated', next, origin));
      try {
        await db().send(new TransactWriteCommand({ TransactItems: items }));
        return done(next);
      } catch (err) {
        const reasons = cancellationReasons(err);
        if (!reasons || reasons.some((r) => r.Code !== undefined && !RETRYABLE_REASONS.has(r.Code))) throw err;
        // Someone changed the product (or an index item) first: back off a little, re-read, re-apply.
        return stale();
      }
    },
  });
}
