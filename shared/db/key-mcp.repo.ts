import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { KeyRecord, McpMode } from '#domain/key/api-key.ts';
import { DomainError } from '#domain/errors.ts';
import { backoff } from '#domain/retry.ts';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';
import { cancellationReasons } from './helpers.ts';
import { requireKey } from './key.repo.ts';

/**
 * A key's MCP mode (docs/mcp.md#read-only-keys), on the key item and on its token item (which the
 * authorizer reads) in one transaction, guarded on the token the key item holds: a rotation at
 * the same moment makes this one read again and write the new token item.
 */
export async function setKeyMcpMode(keyId: number, mode: McpMode): Promise<KeyRecord> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const key = await requireKey(keyId);
    if (key.status === 'revoked') throw new DomainError('invalid_transition', `key ${keyId} is revoked`, 'id');
    try {
      await db().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: keys.key(keyId),
                UpdateExpression: 'SET mcp = :mode',
                ConditionExpression: 'token_hash = :hash AND #s = :active',
                ExpressionAttributeNames: { '#s': 'status' },
                ExpressionAttributeValues: { ':mode': mode, ':hash': key.token_hash, ':active': 'active' },
              },
            },
            {
              Update: {
                TableName: tableName(),
                Key: keys.token(key.token_hash),
                UpdateExpression: 'SET mcp = :mode',
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeValues: { ':mode': mode },
              },
            },
          ],
        }),
      );
      return { ...key, mcp: mode };
    } catch (err) {
      if (!cancellationReasons(err)) throw err;
      await backoff(attempt + 1);
    }
  }
  throw new Error(`key ${keyId} kept changing while its MCP mode was set; try again`);
}
