import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Key, keys } from '../keys.ts';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import type { Item, TransactItem } from './helpers.ts';

/**
 * Counter items (`value` = the last id handed out, absent = 0), taken one of two ways:
 * - `nextInSequence`: one atomic ADD, no read first. Ids ascend but may have gaps when the write
 *   that uses them fails; lists over them are cursor-based.
 * - read (`sequenceValue`, often inside a write's BatchGetItem) and move it in the write's own
 *   transaction (`sequenceMove`), guarded on the value read: no extra round trip and no gap; a
 *   concurrent taker makes the guard fail and the write reads again and takes the next id.
 */
export async function nextInSequence(key: Key): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'ADD #v :one SET #t = :type',
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': ENTITY.sequence },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.value);
}

/** The value a counter item holds; 0 when it was never written. */
export const sequenceValue = (item: Item | undefined): number => Number(item?.value ?? 0);

/** A counter item as stored (strongly consistent), for sequences that keep more than one counter. */
export async function readSequenceItem(key: Key): Promise<Item | undefined> {
  return (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

export const readSequence = async (key: Key): Promise<number> => sequenceValue(await readSequenceItem(key));

/** A condition that the counter attribute `attr` still holds `value` (0 also when it was never written). */
export const unchangedCounter = (attr: string, placeholder: string, value: number) =>
  value === 0 ? `(attribute_not_exists(${attr}) OR ${attr} = ${placeholder})` : `${attr} = ${placeholder}`;

/** The transaction item that moves the counter from `read` to `next`, only if no one else moved it. */
export function sequenceMove(key: Key, read: number, next: number): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET #v = :next, #t = :type',
      ConditionExpression: unchangedCounter('#v', ':read', read),
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: { ':next': next, ':read': read, ':type': ENTITY.sequence },
    },
  };
}

/**
 * The product sequence numbers products (ids 1, 2, ... per store: the page-number list reads a
 * page by id) and variants ("offers"). Ids are taken two ways (docs/catalog-writes.md,
 * "Ids under contention"):
 * - uncontended: an insert reads the sequence (inside the write's BatchGetItem) and moves both
 *   counters in its own transaction, guarded on the values read: no extra call, no gap;
 * - after that guard lost a race: a block of ids reserved by one atomic ADD (no guard, so
 *   racing writers never make each other retry). A reserved id that ends up unused (its
 *   external id was taken by a racing write, or the request ran out of time) is recorded in
 *   `gaps`, so the list still knows which ids hold products and how many there are.
 */
export interface ProductSequence {
  /** The last product id handed out: new ones are last + 1, last + 2, ... */
  last: number;
  /** Offer ids handed out so far: the new ones are offers + 1, offers + 2, ... */
  offers: number;
  /** Ids handed out that hold no product, ascending. */
  gaps: number[];
}

export const productSequenceKey = (storeId: string) => keys.sequence(storeId, 'product');

export function sequenceOf(item: Item | undefined): ProductSequence {
  const gaps = item?.gaps instanceof Set ? [...(item.gaps as Set<number>)].map(Number).sort((a, b) => a - b) : [];
  return { last: sequenceValue(item), offers: Number(item?.offer_seq ?? 0), gaps };
}

/** Products the store holds (or is inserting right now): ids handed out less the known gaps. */
export const productCount = (sequence: ProductSequence): number => sequence.last - sequence.gaps.length;

export async function readProductSequence(storeId: string): Promise<ProductSequence> {
  return sequenceOf(await readSequenceItem(productSequenceKey(storeId)));
}

/** The transaction item that moves both counters from `read` by the products and offers added, only if no one else moved them. */
export function productSequenceMove(
  storeId: string,
  read: ProductSequence,
  products: number,
  offers: number,
): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: productSequenceKey(storeId),
      UpdateExpression: 'SET #v = :nextLast, offer_seq = :nextOffers, #t = :type',
      ConditionExpression: `${unchangedCounter('#v', ':last', read.last)} AND ${unchangedCounter('offer_seq', ':offers', read.offers)}`,
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: {
        ':nextLast': read.last + products,
        ':nextOffers': read.offers + offers,
        ':last': read.last,
        ':offers': read.offers,
        ':type': ENTITY.sequence,
      },
    },
  };
}

/** Ids reserved for this request alone: products `firstId`.., offers `firstOffer`.. */
export interface ReservedIds {
  firstId: number;
  firstOffer: number;
}

/**
 * Reserves `products` product ids and `offers` offer ids with one atomic ADD: no read, no guard,
 * so any number of writers reserve at once without retrying. The ids are this caller's alone;
 * the ones it does not use must go to `recordGaps`.
 */
export async function reserveProductIds(storeId: string, products: number, offers: number): Promise<ReservedIds> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: productSequenceKey(storeId),
      UpdateExpression: 'ADD #v :products, offer_seq :offers SET #t = :type',
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: { ':products': products, ':offers': offers, ':type': ENTITY.sequence },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return {
    firstId: Number(out.Attributes?.value) - products + 1,
    firstOffer: Number(out.Attributes?.offer_seq) - offers + 1,
  };
}

/** Records reserved ids that will hold no product (one atomic ADD to a number set). */
export async function recordGaps(storeId: string, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: productSequenceKey(storeId),
      UpdateExpression: 'ADD gaps :ids',
      ExpressionAttributeValues: { ':ids': new Set(ids) },
    }),
  );
}

/**
 * The ids of the products at 1-based positions `first`..`first + count - 1` of the id-ordered
 * list, skipping `gaps` (ascending): without gaps, simply `first`..`first + count - 1`.
 */
export function idsAtPositions(first: number, count: number, gaps: readonly number[]): number[] {
  const ids: number[] = [];
  let id = first;
  let g = 0;
  // Every gap at or below the id a position lands on moves that position (and all after it) one id on.
  while (g < gaps.length && (gaps[g] as number) <= id) {
    g++;
    id++;
  }
  while (ids.length < count) {
    if (g < gaps.length && gaps[g] === id) g++;
    else ids.push(id);
    id++;
  }
  return ids;
}
