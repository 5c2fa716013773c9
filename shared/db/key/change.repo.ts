import type { RequestContext } from '#shared/context.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { keys } from '../keys.ts';
import { cancellationReasons } from '../core/helpers.ts';
import { getKey, type KeyMissing, type KeyRevoked } from './repo.ts';

export type KeySettings = Partial<Pick<KeyRecord, 'mcp' | 'writes_per_hour' | 'status_changes_per_hour'>>;

/** One `SET` of a key item and of its token item: attribute names and values for an update. */
interface KeyAndTokenSet {
  set: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/** A further condition on the key item, ANDed with the token guard. */
interface KeyGuard {
  condition: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
}

/**
 * What one attempt at a key change did: `changed`, with the key as it is afterwards (also when
 * nothing needed writing); or `lost`, when a rotation or another change came between its read
 * and its write, and nothing was written (the use case reads again: shared/app/key-changes.ts).
 */
export type KeyChange = { kind: 'changed'; key: KeyRecord } | { kind: 'lost' };

/**
 * Changes a key item and its token item (what the authorizer reads, so the change takes effect
 * on the next request) in one transaction, guarded on the token the key item held when read
 * (`key`): a rotation in between makes the attempt `lost`, never a key record at odds with its
 * live token.
 */
async function changeKeyAndToken(
  ctx: RequestContext,
  key: KeyRecord,
  update: KeyAndTokenSet,
  after: KeyRecord,
  guard?: KeyGuard,
): Promise<KeyChange> {
  const { set, names, values } = update;
  try {
    await send(
      ctx,
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.key(key.id),
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
    return { kind: 'changed', key: after };
  } catch (err) {
    if (!cancellationReasons(err)) throw err;
    return { kind: 'lost' };
  }
}

/** One attempt to revoke a key for good (a revoked one stays as it is); `missing` when none has the id. */
export async function revokeKey(ctx: RequestContext, keyId: number, now: string): Promise<KeyChange | KeyMissing> {
  const read = await getKey(ctx, keyId);
  if (!read) return { kind: 'missing' };
  if (read.status === 'revoked') return { kind: 'changed', key: read };
  // The token item gets `revoked_at` too: it is revoked for good, and one SET serves both.
  return changeKeyAndToken(
    ctx,
    read,
    {
      set: 'SET #s = :revoked, revoked_at = :now',
      names: { '#s': 'status' },
      values: { ':revoked': 'revoked', ':now': now },
    },
    { ...read, status: 'revoked', revoked_at: now },
  );
}

/**
 * One attempt at the settings a request's handling reads (the MCP mode, docs/mcp.md#read-only-keys;
 * the write budget, docs/api.md#write-budget), on the key item and on its token item (which the
 * authorizer reads), guarded on the token the key item holds and on the key being active;
 * `missing` or `revoked` when there is no active key to change (nothing written).
 */
export async function updateKeySettings(
  ctx: RequestContext,
  keyId: number,
  changes: KeySettings,
): Promise<KeyChange | KeyMissing | KeyRevoked> {
  const names = Object.fromEntries(Object.keys(changes).map((k, i) => [`#f${i}`, k]));
  const values = Object.fromEntries(Object.values(changes).map((v, i) => [`:v${i}`, v]));
  const set = `SET ${Object.keys(names)
    .map((n, i) => `${n} = :v${i}`)
    .join(', ')}`;
  const key = await getKey(ctx, keyId);
  if (!key) return { kind: 'missing' };
  if (key.status === 'revoked') return { kind: 'revoked' };
  return changeKeyAndToken(
    ctx,
    key,
    { set, names, values },
    { ...key, ...changes },
    { condition: '#s = :active', names: { '#s': 'status' }, values: { ':active': 'active' } },
  );
}
