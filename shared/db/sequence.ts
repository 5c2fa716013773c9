import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import type { Key } from './keys.ts';

/**
 * The next value of a counter item (one atomic ADD, no read first). Ids taken this way ascend
 * but may have gaps when the write that uses them fails; lists over them are cursor-based.
 * (Products use a guarded sequence instead: their page-number list needs dense ids.)
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
