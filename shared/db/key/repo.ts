import type { RequestContext } from '#shared/context.ts';
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { TABLE } from '../core/table.ts';
import { keys } from '../keys.ts';
import {
  batchGet,
  cancellationReasons,
  isConditionalCheckFailed,
  itemFromError,
  itemKey,
  queryAll,
} from '../core/helpers.ts';
import type { Ability } from '#domain/key/abilities.ts';
import type { KeyRecord, McpMode } from '#domain/key/api-key.ts';
import type { Destination } from '#domain/key/destination.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { nextInSequence } from '../core/sequence.ts';
import { tokenItem, toKeyRecord, keyItem, destinationAttributes } from './item.ts';

/** The next key id: a key's, or a grant's, drawn when the store admin approves it (shared/db/oauth/request.repo.ts). */
export const nextKeyId = (ctx: RequestContext) => nextInSequence(ctx, keys.keySequence());

export async function createKey(
  ctx: RequestContext,
  input: {
    storeId: string;
    currency: string | null;
    name: string;
    abilities: Ability[];
    webhookUrl: string | null;
    events: string[];
    excludeOwn?: boolean;
    mcp?: McpMode;
    writesPerHour?: number | null;
    statusChangesPerHour?: number | null;
    tokenHash: string;
    webhookSecret: string;
    awsExternalId: string;
    now: string;
  },
): Promise<KeyRecord> {
  const id = await nextKeyId(ctx);
  const record: KeyRecord = {
    id,
    store_id: input.storeId,
    name: input.name,
    abilities: input.abilities,
    status: 'active',
    webhook_url: input.webhookUrl,
    destination: input.webhookUrl === null ? null : { kind: 'webhook', url: input.webhookUrl },
    aws_external_id: input.awsExternalId,
    events: input.events,
    exclude_own: input.excludeOwn ?? false,
    mcp: input.mcp ?? 'full',
    writes_per_hour: input.writesPerHour ?? null,
    status_changes_per_hour: input.statusChangesPerHour ?? null,
    created_at: input.now,
    revoked_at: null,
    last_used_at: null,
    token_hash: input.tokenHash,
    ordered_from: null,
    webhook_secret: input.webhookSecret,
    previous_webhook_secret: null,
    previous_webhook_secret_expires_at: null,
  };
  await send(
    ctx,
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: tableName(),
            Item: keyItem(record),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: tableName(),
            Item: tokenItem(record, input.currency),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    }),
  );
  return record;
}

export async function getKey(ctx: RequestContext, keyId: number): Promise<KeyRecord | undefined> {
  const out = await send(ctx, new GetCommand({ TableName: tableName(), Key: keys.key(keyId), ConsistentRead: true }));
  return out.Item ? toKeyRecord(out.Item) : undefined;
}

/** The record with `last_used_at`, which lives on the token item (the hot path writes it there). */
export async function withLastUsed(ctx: RequestContext, record: KeyRecord): Promise<KeyRecord> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.token(record.token_hash), ConsistentRead: true }),
  );
  return { ...record, last_used_at: out.Item?.last_used_at ?? null };
}

/** A key that is not there to change: none has the id. */
export type KeyMissing = { kind: 'missing' };
/** A key that may not change any more: revoking is for good. */
export type KeyRevoked = { kind: 'revoked' };

/**
 * Every key of a store (admin list, webhook fan-out). gsi1 projects what the fan-out reads for
 * every key (shared/db/core/table.ts), not `mcp`, `exclude_own`, the budgets or a grant's `kind`
 * (the fan-out reads `exclude_own` from the one key that caused an event, when it would receive
 * it: shared/app/fan-out.ts). The admin list (`wholeItems`) reads the key items themselves in
 * the same BatchGetItem as their token items, so it costs no extra round trip up to 50 keys (0.5
 * read units more per key) and leaves the index, whose projection cannot change without a rebuild,
 * as it is.
 */
export async function listKeysOfStore(ctx: RequestContext, storeId: string, wholeItems = true): Promise<KeyRecord[]> {
  const entries = await queryAll(ctx, {
    TableName: tableName(),
    IndexName: TABLE.gsi1.indexName,
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.keysOfStoreIndex(storeId).gsi1pk },
  });
  if (!wholeItems) return entries.map((i) => toKeyRecord(i));
  const found = await batchGet(
    ctx,
    entries.flatMap((i) => [keys.key(i.id), keys.token(i.token_hash)]),
    false,
  );
  return entries.map((i) => {
    const key = found.get(itemKey(keys.key(i.id))) ?? i;
    return toKeyRecord(key, found.get(itemKey(keys.token(i.token_hash)))?.last_used_at ?? null);
  });
}

/**
 * New token for the same key id (so external ids stay); the old token stops working at once.
 * One attempt, one transaction, guarded three ways: the key is still active with the token that
 * was read (a concurrent revoke wins), and the old token item saw no request since it was read
 * (its `uses` counter), so the rate-limit slots carried over are complete. `lost` when a request
 * or a change came between (the use case tries again: shared/app/key-changes.ts); `missing` or
 * `revoked` when there is no active key to rotate (nothing written).
 */
export async function rotateKeyToken(
  ctx: RequestContext,
  keyId: number,
  newTokenHash: string,
  currency: string | null,
): Promise<{ kind: 'rotated'; key: KeyRecord } | { kind: 'lost' } | KeyMissing | KeyRevoked> {
  const key = await getKey(ctx, keyId);
  if (!key) return { kind: 'missing' };
  if (key.status === 'revoked') return { kind: 'revoked' };
  const old = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.token(key.token_hash), ConsistentRead: true }),
  );
  const seen = old.Item?.uses as number | undefined;
  const rotated: KeyRecord = { ...key, token_hash: newTokenHash, last_used_at: old.Item?.last_used_at ?? null };
  try {
    await send(
      ctx,
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.key(keyId),
              UpdateExpression: 'SET token_hash = :new',
              ConditionExpression: 'token_hash = :old AND #s = :active',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':new': newTokenHash, ':old': key.token_hash, ':active': 'active' },
            },
          },
          {
            Delete: {
              TableName: tableName(),
              Key: keys.token(key.token_hash),
              ConditionExpression:
                seen === undefined ? 'attribute_not_exists(uses) AND #s = :active' : 'uses = :uses AND #s = :active',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues:
                seen === undefined ? { ':active': 'active' } : { ':uses': seen, ':active': 'active' },
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: tokenItem(rotated, currency, old.Item ?? {}),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
    return { kind: 'rotated', key: rotated };
  } catch (err) {
    if (!cancellationReasons(err)) throw err;
    return { kind: 'lost' };
  }
}

/**
 * What a change of a key's webhook settings did: `updated`, with the key as it is now; `missing`;
 * `revoked`; or `secret_moved`, when the webhook secret was no longer the one expected. Only
 * `updated` wrote anything.
 */
export type WebhookUpdate = { kind: 'updated'; key: KeyRecord } | KeyMissing | KeyRevoked | { kind: 'secret_moved' };

/**
 * Webhook settings of an active key; a revoked one is `revoked` (revoking is for good, and the
 * condition holds it against a revoke between the caller's read and this write).
 * `expectedSecret` guards a secret rotation: two rotations at once would otherwise both keep the
 * same "previous" secret, and the first caller's new secret would be neither current nor previous.
 */
export async function updateKeyWebhook(
  ctx: RequestContext,
  keyId: number,
  changes: {
    /** A new destination (a webhook URL among them) and, for a FIFO queue, where its order starts; null removes it. */
    destination?: { to: Destination | null; orderedFrom: number | null };
    events?: string[];
    exclude_own?: boolean;
    webhook_secret?: string;
    previous_webhook_secret?: string | null;
    previous_webhook_secret_expires_at?: string | null;
  },
  expectedSecret?: string,
): Promise<WebhookUpdate> {
  const { destination, ...fields } = changes;
  const attributes = {
    ...fields,
    ...(destination ? destinationAttributes(destination.to, destination.orderedFrom) : {}),
  };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets: string[] = [];
  for (const [i, [field, value]] of Object.entries(attributes).entries()) {
    names[`#f${i}`] = field;
    values[`:v${i}`] = value;
    sets.push(`#f${i} = :v${i}`);
  }
  try {
    const out = await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.key(keyId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: `attribute_exists(pk) AND #status = :active${
          expectedSecret === undefined ? '' : ' AND webhook_secret = :expected'
        }`,
        ExpressionAttributeNames: { ...names, '#status': 'status' },
        ExpressionAttributeValues: {
          ...values,
          ':active': 'active',
          ...(expectedSecret === undefined ? {} : { ':expected': expectedSecret }),
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { kind: 'updated', key: await withLastUsed(ctx, toKeyRecord(out.Attributes ?? {})) };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const old = itemFromError(err.Item);
    if (!old) return { kind: 'missing' };
    return old.status === 'active' ? { kind: 'secret_moved' } : { kind: 'revoked' };
  }
}

/**
 * The key's external id for AWS destinations (docs/destinations.md): the one it has, or a new one
 * written only if it still has none, so two callers at once both get the one stored. `not_found`
 * naming `id` for no such key.
 */
export async function ensureExternalId(ctx: RequestContext, keyId: number, fresh: string): Promise<string | Refused> {
  try {
    await send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.key(keyId),
        UpdateExpression: 'SET aws_external_id = :id',
        ConditionExpression:
          'attribute_exists(pk) AND (attribute_not_exists(aws_external_id) OR aws_external_id = :null)',
        ExpressionAttributeValues: { ':id': fresh, ':null': null },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return fresh;
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const old = itemFromError(err.Item);
    if (!old) return refused('not_found', `key ${keyId} does not exist`, 'id');
    return String(old.aws_external_id);
  }
}
