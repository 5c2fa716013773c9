import type { RequestContext } from '#shared/context.ts';
import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys, type Key } from '../keys.ts';
import { batchGet, cancellationReasons, itemKey, namedTransaction, type Item } from '../core/helpers.ts';
import type { Product } from '#domain/product/product.ts';
import { indexWrites, linkCopyWrite, toProduct } from './item.ts';
import { idsAtPositions, productCount, sequenceOf, type ProductSequence } from '../core/sequence.ts';
import { eventPut } from '../event/item.ts';
import type { StoreEvent } from '#domain/event/event.ts';

/**
 * Products have ascending ids per store, dense but for the gaps the product sequence records
 * (core/sequence.ts): page p of the list is the ids at its positions and the total is the
 * sequence's count, so a list page is one BatchGetItem (two when gaps move it), whatever the
 * size of the store (`getDensePage`).
 */

/** `found` plus, read strongly, the keys of `wanted` it lacks (an eventually consistent read may not see an item just written). */
async function completeStrongly(
  ctx: RequestContext,
  found: Map<string, Item>,
  wanted: Key[],
): Promise<Map<string, Item>> {
  const missing = wanted.filter((k) => !found.has(itemKey(k)));
  if (missing.length > 0) for (const [k, item] of await batchGet(ctx, missing)) found.set(k, item);
  return found;
}

export async function getProductsByIds(
  ctx: RequestContext,
  storeId: string,
  ids: number[],
  consistent = false,
): Promise<Product[]> {
  if (ids.length === 0) return [];
  const wanted = ids.map((id) => keys.product(storeId, id));
  const found = await completeStrongly(ctx, await batchGet(ctx, wanted, consistent), wanted);
  return ids.flatMap((id) => {
    const item = found.get(itemKey(keys.product(storeId, id)));
    return item ? [toProduct(item)] : [];
  });
}

/**
 * Which of `ids` hold a product, read strongly (one BatchGetItem per 100): settling an expired
 * id reservation counts what exists now.
 */
export async function existingProductIds(
  ctx: RequestContext,
  storeId: string,
  ids: readonly number[],
): Promise<Set<number>> {
  const found = await batchGet(
    ctx,
    ids.map((id) => keys.product(storeId, id)),
    true,
  );
  return new Set(ids.filter((id) => found.has(itemKey(keys.product(storeId, id)))));
}

/**
 * Page `page` of the unfiltered list, the store's product count and the sequence it was counted
 * from. Ids are dense but for the gaps the sequence records, so the page is the ids at its
 * positions: one BatchGetItem (the sequence and the ids of the page as if there were no gap), and
 * a second one only when gaps at or below the page move it onto ids not read yet. With `known`
 * (the sequence the caller has already read and settled) the sequence is not read again.
 * Eventually consistent like getProduct: a product created a moment ago may be missing from the
 * count and the last page for as long.
 */
export async function getDensePage(
  ctx: RequestContext,
  storeId: string,
  page: number,
  limit: number,
  known?: ProductSequence,
): Promise<{ products: Product[]; total: number; sequence: ProductSequence }> {
  const first = (page - 1) * limit + 1;
  const guess = idsAtPositions(first, limit, known?.gaps ?? []);
  const seqKey = keys.sequence(storeId, 'product');
  const found = await batchGet(
    ctx,
    [...(known ? [] : [seqKey]), ...guess.map((id) => keys.product(storeId, id))],
    false,
  );
  const sequence = known ?? sequenceOf(found.get(itemKey(seqKey)));
  const ids = idsAtPositions(first, limit, sequence.gaps).filter((id) => id <= sequence.last);
  const unread = ids.filter((id) => !guess.includes(id));
  if (unread.length > 0)
    for (const [k, item] of await batchGet(
      ctx,
      unread.map((id) => keys.product(storeId, id)),
      false,
    ))
      found.set(k, item);
  await completeStrongly(
    ctx,
    found,
    ids.map((id) => keys.product(storeId, id)),
  );
  const products = ids.flatMap((id) => {
    const item = found.get(itemKey(keys.product(storeId, id)));
    return item ? [toProduct(item)] : [];
  });
  return { products, total: productCount(sequence), sequence };
}

// ---- writes (a new product: ./insert.repo.ts) ------------------------------------------------

/** One fresh variant id from the store's offer sequence (the rare product that has no variant). */
export async function reserveOfferId(ctx: RequestContext, storeId: string): Promise<number> {
  const out = await send(
    ctx,
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
 * How a product change ended: `stale` when another write changed the product (or an index item)
 * first, and nothing was written; `current` is the product as that write left it when the failed
 * condition handed it back (not after a transaction conflict, nor when an index item failed).
 */
export type ChangeOutcome = { kind: 'committed'; product: Product } | { kind: 'stale'; current?: Product };

/**
 * Writes `next` over `current` in one transaction: the product guarded on the `updated_at` that
 * was read (which strictly increases on every change, see nextUpdatedAt), so a concurrent writer
 * is never overwritten silently; its link's copy, name index and SKU links; and `event`. After
 * `stale` the use case decides again: from `current` when the failed guard handed it back, else
 * after a read.
 *
 * Only the fields a write may touch are SET, so attributes this module does not know survive.
 */
export async function commitProductChange(
  ctx: RequestContext,
  current: Product,
  next: Product,
  event: StoreEvent,
): Promise<ChangeOutcome> {
  const tx = namedTransaction([
    [
      'product',
      {
        Update: {
          TableName: tableName(),
          Key: keys.product(next.store_id, next.id),
          UpdateExpression:
            'SET #name = :name, description = :description, #status = :status, image_url = :image_url, ' +
            'category_ids = :category_ids, category_external_ids = :category_external_ids, ' +
            'tag_external_ids = :tag_external_ids, offers = :offers, updated_at = :updated_at',
          ConditionExpression: 'updated_at = :previous',
          // The loser of a race decides again from this at once, without a read.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
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
    ],
    ['index', indexWrites(next, current)],
    ['copy', linkCopyWrite(next)],
    ['event', eventPut(event)],
  ]);
  try {
    await send(ctx, new TransactWriteCommand({ TransactItems: tx.items }));
    return { kind: 'committed', product: next };
  } catch (err) {
    const cancelled = tx.cancelledBy(err);
    // A reason other than a lost race (a validation error, an item too large) is a fault.
    if (!cancelled || cancellationReasons(err)?.some((r) => r.Code !== undefined && !RETRYABLE_REASONS.has(r.Code)))
      throw err;
    const product = cancelled.item('product');
    return product ? { kind: 'stale', current: toProduct(product) } : { kind: 'stale' };
  }
}
