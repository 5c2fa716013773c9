import type { RequestContext } from '#shared/context.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { TABLE } from '../core/table.ts';
import { keys } from '../keys.ts';
import { isConditionalCheckFailed } from '../core/helpers.ts';

/**
 * One key's write counts of one clock hour (docs/api.md#write-budget), on an item of the key's
 * partition that expires a day later (TTL). One conditional UpdateItem counts a write: ADD only
 * while each count it raises is under its limit, so racing writes can never take more than the
 * budget (20 at once against 5: exactly 5 pass) and nothing is read first.
 */
export async function countWrite(
  ctx: RequestContext,
  keyId: number,
  hourStartMs: number,
  counts: { writes: number | null; statusChanges: number | null },
): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':one': 1, ':ttl': Math.floor(hourStartMs / 1000) + 25 * 3600 };
  const adds: string[] = [];
  const conditions: string[] = [];
  for (const [attr, limit] of [
    ['writes', counts.writes],
    ['status_changes', counts.statusChanges],
  ] as const) {
    if (limit === null) continue;
    names[`#${attr}`] = attr;
    values[`:max_${attr}`] = limit;
    adds.push(`#${attr} :one`);
    conditions.push(`(attribute_not_exists(#${attr}) OR #${attr} < :max_${attr})`);
  }
  if (adds.length === 0) return true;
  try {
    await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.writeBudget(keyId, hourStartMs),
        UpdateExpression: `SET #ttl = :ttl ADD ${adds.join(', ')}`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: { ...names, '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}
