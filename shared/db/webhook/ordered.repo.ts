import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { RequestContext } from '#shared/context.ts';
import { send, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { isConditionalCheckFailed } from '../core/helpers.ts';

/**
 * How far an ordered destination's group is through the store's event log: every event of the
 * group up to `through` is delivered, failed for good, or not one the key receives
 * (shared/app/ordered-delivery.ts). One item per (key, family); 0 when none was written yet.
 */
export async function getOrderedCursor(ctx: RequestContext, keyId: number, family: string): Promise<number> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.orderedCursor(keyId, family), ConsistentRead: true }),
  );
  return typeof out.Item?.through === 'number' ? out.Item.through : 0;
}

/** Moves the cursor forward to `through`, never back (two runs that passed the same events write once). */
export async function advanceOrderedCursor(
  ctx: RequestContext,
  keyId: number,
  family: string,
  through: number,
): Promise<void> {
  try {
    await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.orderedCursor(keyId, family),
        UpdateExpression: 'SET through = :t, #type = :type, key_id = :k',
        ConditionExpression: 'attribute_not_exists(through) OR through < :t',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':t': through, ':type': ENTITY.orderedCursor, ':k': keyId },
      }),
    );
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
  }
}
