import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import type { TransactItem } from './helpers.ts';

/**
 * The guarded product sequence that keeps product ids dense (the page-number list needs them).
 * An insert first reserves its offer ids and reads the product count in one UpdateItem, then
 * moves the count in its own transaction, guarded on the value read: a concurrent insert makes
 * the guard fail and the insert takes the next ids.
 */
export interface ProductIds {
  /** Products the store had when read: the new ones are count + 1, count + 2, ... */
  count: number;
  /** The first of the offer ids reserved (they are consecutive). */
  firstOffer: number;
}

export async function reserveProductIds(storeId: string, offerCount: number): Promise<ProductIds> {
  const reserved = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.sequence(storeId, 'product'),
      UpdateExpression: 'ADD offer_seq :n SET #t = :type',
      ExpressionAttributeNames: { '#t': 'type' },
      ExpressionAttributeValues: { ':n': offerCount, ':type': ENTITY.sequence },
      ReturnValues: 'ALL_NEW',
    }),
  );
  return {
    count: Number(reserved.Attributes?.value ?? 0),
    firstOffer: Number(reserved.Attributes?.offer_seq ?? 0) - offerCount + 1,
  };
}

/** The transaction item that moves the product count from `count` by `added`, only if no one else did. */
export function productCountMove(storeId: string, count: number, added: number): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.sequence(storeId, 'product'),
      UpdateExpression: 'SET #v = :next',
      ConditionExpression: count === 0 ? 'attribute_not_exists(#v)' : '#v = :count',
      ExpressionAttributeNames: { '#v': 'value' },
      ExpressionAttributeValues: count === 0 ? { ':next': added } : { ':next': count + added, ':count': count },
    },
  };
}
