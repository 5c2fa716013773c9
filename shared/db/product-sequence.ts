import { tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import type { Item, TransactItem } from './helpers.ts';
import { readSequenceItem, sequenceValue, unchangedCounter } from './sequence.ts';

/**
 * The guarded product sequence that keeps product ids dense (the page-number list needs them)
 * and numbers the variants ("offers"). An insert reads it (inside the write's BatchGetItem, or
 * on its own after a lost race) and moves both counters in its own transaction, guarded on the
 * values read: a concurrent insert or offer reservation makes the guard fail, and the insert
 * reads again and takes the next ids.
 */
export interface ProductSequence {
  /** Products the store had when read: the new ones are count + 1, count + 2, ... */
  count: number;
  /** Offer ids handed out so far: the new ones are offers + 1, offers + 2, ... */
  offers: number;
}

export const productSequenceKey = (storeId: string) => keys.sequence(storeId, 'product');

export function sequenceOf(item: Item | undefined): ProductSequence {
  return { count: sequenceValue(item), offers: Number(item?.offer_seq ?? 0) };
}

export async function readProductSequence(storeId: string): Promise<ProductSequence> {
  return sequenceOf(await readSequenceItem(productSequenceKey(storeId)));
}

/** The transaction item that moves both counters from `read` by the products and offers added, only if no one else moved them. */
export function productSequenceMove(storeId: string, read: ProductSequence, products: number, offers: number): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: productSequenceKey(storeId),
      UpdateExpression: 'SET #v = :nextCount, offer_seq = :nextOffers, #t = :type',
      ConditionExpression: `${unchangedCounter('#v', ':count', read.count)} AND ${unchangedCounter('offer_seq', ':offers', read.offers)}`,
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: {
        ':nextCount': read.count + products,
        ':nextOffers': read.offers + offers,
        ':count': read.count,
        ':offers': read.offers,
        ':type': ENTITY.sequence,
      },
    },
  };
}
