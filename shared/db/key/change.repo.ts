import type { KeyRecord } from '#domain/key/api-key.ts';
import { DomainError } from '#domain/errors.ts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { backoff } from '#domain/time.ts';
import { db, tableName } from '../core/client.ts';
import { keys } from '../keys.ts';
import { cancellationReasons } from '../core/helpers.ts';
import { requireKey, withLastUsed } from './repo.ts';

export type KeySettings = Partial<Pick<KeyRecord, 'mcp' | 'writes_per_hour' | 'status_changes_per_hour'>>;

/** One `SET` of a key item and of its token item: attribute names and values for an update. */
export interface KeyAndTokenSet {
  set: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/** A further condition on the key item, ANDed with the token guard. */
export interface KeyGuard {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/**
 * Changes a key item and its token item (what the authorizer reads, so the change takes effect
 * on the next request) in one transaction, guarded on the token the key item held when read: a
 * rotation in between makes the round read again and change the new token item, never a key
 * record at odds with its live token. `plan` sees the key as read and answers the `SET` both items
 * get and the key as it is afterwards, or `{ done }` to answer without writing.
 */
export async function updateKeyAndToken(
  keyId: number,
  plan: (key: KeyRecord) => { done: KeyRecord } | { update: KeyAndTokenSet; keyGuard?: KeyGuard; after: KeyRecord },
): Promise<KeyRecord> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const key = await requireKey(keyId);
    const planned = plan(key);
    if ('done' in planned) return planned.done;
    const { set, names, values } = planned.update;
    const guard = planned.keyGuard;
    try {
      await db().send(
        new TransactWriteCommand({
          TransactItems: [
            {
              Update: {
                TableName: tableName(),
                Key: keys.key(keyId),
                UpdateExpression: set,
                ConditionExpression: `token_hash = :hash${guard ? ` AND ${guard.condition}` : ''}`,
                ExpressionAttributeNames: { ...names, ...guard?.names },
                ExpressionAttributeValues: { ...values, ...guard?.values, ':hash': key.token_hash },
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
      return planned.after;
    } catch (err) {
      if (!cancellationReasons(err)) throw err;
      await backoff(attempt + 1);
    }
  }
  throw new Error(`key ${keyId} kept changing while it was being changed; try again`);
}

export async function revokeKey(keyId: number, now: string): Promise<KeyRecord> {
  const key = await updateKeyAndToken(keyId, (read) =>
    read.status === 'revoked'
      ? { done: read }
      : {
          // The token item gets `revoked_at` too: it is revoked for good, and one SET serves both.
          update: {
            set: 'SET #s = :revoked, revoked_at = :now',
            names: { '#s': 'status' },
            values: { ':revoked': 'revoked', ':now': now },
          },
          after: { ...read, status: 'revoked', revoked_at: now },
        },
  );
  return withLastUsed(key);
}

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
  return updateKeyAndToken(keyId, (key) => {
    if (key.status === 'revoked') throw new DomainError('invalid_transition', `key ${keyId} is revoked`, 'id');
    return {
      update: { set, names, values },
      keyGuard: { condition: '#s = :active', names: { '#s': 'status' }, values: { ':active': 'active' } },
      after: { ...key, ...changes },
    };
  });
}
