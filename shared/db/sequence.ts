import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import type { Key } from './keys.ts';
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
