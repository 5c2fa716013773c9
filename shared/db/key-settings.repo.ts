import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { KeyRecord } from '#domain/key/api-key.ts';
import { DomainError } from '#domain/errors.ts';
import { backoff } from '#domain/retry.ts';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';
import { cancellationReasons } from './helpers.ts';
import { requireKey } from './key.repo.ts';

export type KeySettings = Partial<Pick<KeyRecord, 'mcp' | 'writes_per_hour' | 'status_changes_per_hour'>>;

/**
 * Settings a request's handling reads (the MCP mode, docs/mcp.md#read-only-keys; the write
 * budget, docs/api.md#write-budget), on the key item and on its token item (which the authorizer
 * reads) in one transaction, guarded on the token the key item holds: a rotation at the same
 * moment makes this one read again and write the new token item.
 */
export async function updateKeySettings(keyId: number, changes: KeySettings): Promise<KeyRecord> {
  const names = Object.fromEntries(Object.keys(changes).map((k, i) => [`#f${i}`, k]));
  const values = Object.fromEntries(Object.values(changes).map((v, i) => [`:v${i}`, v]));
  const set = `SET ${Object.keys(names)
    .map((n, i) => `${n} = :v${i}`)
    .join(', ')}`;
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
                UpdateExpression: set,
                ConditionExpression: 'token_hash = :hash AND #s = :active',
                ExpressionAttributeNames: { ...names, '#s': 'status' },
                ExpressionAttributeValues: { ...values, ':hash': key.token_hash, ':active': 'active' },
              },
            },
            {
              Update: {
                TableName: tableName(),
                Key: keys.token(key.token_hash),
                UpdateExpression: set,
                ConditionExpression: 'attribute_exists(pk)',
                ExpressionAttributeNames: names,
                ExpressionAttributeValues: values,
              },
            },
          ],
        }),
      );
      return { ...key, ...changes };
    } catch (err) {
      if (!cancellationReasons(err)) throw err;
      await backoff(attempt + 1);
    }
  }
  throw new Error(`key ${keyId} kept changing while its settings were changed; try again`);
}
