import type { RequestContext } from '#shared/context.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { keys } from '../keys.ts';
import { conditionalWrite, ttlOf } from './write.ts';

/**
 * Counts of OAuth requests per fixed window (docs/oauth.md#bounds): one conditional UpdateItem
 * takes a place in the window's count, or is refused when the count is at `max`. The item goes
 * with its window (TTL); a count never needs reading first.
 */
export async function takePlace(
  ctx: RequestContext,
  scope: string,
  window: { startMs: number; endMs: number },
  max: number,
): Promise<boolean> {
  return conditionalWrite(() =>
    send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.oauthLimit(scope, window.startMs),
        UpdateExpression: 'ADD #n :one SET #type = :type, #ttl = :ttl',
        ConditionExpression: 'attribute_not_exists(#n) OR #n < :max',
        ExpressionAttributeNames: { '#n': 'count', '#type': 'type', '#ttl': TABLE.ttlAttribute },
        ExpressionAttributeValues: { ':one': 1, ':max': max, ':type': ENTITY.oauthLimit, ':ttl': ttlOf(window.endMs) },
      }),
    ),
  );
}
