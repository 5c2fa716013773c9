import type { RequestContext } from '#shared/context.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { Ability } from '#domain/key/abilities.ts';
import type { KeyRecord, McpMode } from '#domain/key/api-key.ts';
import { send, tableName } from '../core/client.ts';
import type { Item, TransactItem } from '../core/helpers.ts';
import { keys } from '../keys.ts';
import { keyItem, tokenItem } from './item.ts';
import { getKey } from './repo.ts';

/**
 * An OAuth grant's key items (docs/oauth.md#tokens): a grant is a key whose token item is its
 * access token. The OAuth repositories commit them in their own transactions (the redemption of an
 * approval, the issuing of tokens: shared/db/oauth); the actions that write them are built here,
 * beside every other write of a key's items.
 */

/** A grant's key as the waiting page's redemption writes it, before any access token exists. */
export interface NewGrantKey {
  id: number;
  store_id: string;
  /** The store's currency, copied to the token item as for every key. */
  currency: string | null;
  name: string;
  abilities: Ability[];
  mcp: McpMode;
  writes_per_hour: number | null;
  status_changes_per_hour: number | null;
  client_id: string;
  /** The grant's resource, kept on the key item; `audience`, the part of the API it covers. */
  resource: string;
  audience: string;
  /** The hash of a token nobody holds: the grant has no access token until its code is exchanged. */
  placeholderTokenHash: string;
  webhookSecret: string;
  now: string;
}

/**
 * The Puts of a new grant's key item and of a token item that has already expired, each only if
 * the item does not exist yet.
 */
export function putGrantKey(grant: NewGrantKey): TransactItem[] {
  const record: KeyRecord = {
    id: grant.id,
    store_id: grant.store_id,
    name: grant.name,
    abilities: grant.abilities,
    status: 'active',
    webhook_url: null,
    // A grant delivers no events (an app reads GET /events); `keys external-id` can give it an id.
    destination: null,
    aws_external_id: null,
    events: [],
    exclude_own: false,
    mcp: grant.mcp,
    writes_per_hour: grant.writes_per_hour,
    status_changes_per_hour: grant.status_changes_per_hour,
    created_at: grant.now,
    revoked_at: null,
    last_used_at: null,
    kind: 'grant',
    client_id: grant.client_id,
    token_hash: grant.placeholderTokenHash,
    ordered_from: null,
    webhook_secret: grant.webhookSecret,
    previous_webhook_secret: null,
    previous_webhook_secret_expires_at: null,
  };
  return [
    {
      Put: {
        TableName: tableName(),
        Item: keyItem(record, { resource: grant.resource }),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...tokenItem(record, grant.currency), kind: 'grant', expires_at: 0, audience: grant.audience },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}

/**
 * A grant's key as read before its access token is replaced: the record, and its live token item
 * as read (what the new one carries over: the rate-limit ring, the last use, the currency).
 */
export interface GrantKeyRead {
  key: KeyRecord;
  /** The token item the key points at; undefined if it was not there. */
  readonly token: Item | undefined;
  /**
   * The store's currency as that token item carries it (a store's currency never changes), so
   * issuing needs no read of the store; undefined if the item does not carry one.
   */
  currency: string | undefined;
}

/** The grant's key and, while it is active, its token item: undefined when the key does not exist. */
export async function readGrantKey(ctx: RequestContext, keyId: number): Promise<GrantKeyRead | undefined> {
  const key = await getKey(ctx, keyId);
  if (!key) return undefined;
  if (key.status !== 'active') return { key, token: undefined, currency: undefined };
  const { Item: token } = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.token(key.token_hash), ConsistentRead: true }),
  );
  return { key, token, currency: typeof token?.currency_code === 'string' ? token.currency_code : undefined };
}

/** The grant's next access token: its hash, when it expires, and the part of the API it covers. */
export interface NextAccessToken {
  hash: string;
  expiresAt: number;
  audience: string;
  currency: string | null;
}

/**
 * The actions that replace the grant's access token: the key item points at the new hash, guarded
 * on being active with the hash read (a revoke or another rotation in between cancels the
 * transaction), the old token item goes, and the new one is put, carrying the old one's rate-limit
 * ring (rotating is no way around the allowance, as on `keys rotate`).
 */
export function replaceGrantToken(read: GrantKeyRead, next: NextAccessToken): TransactItem[] {
  const { key } = read;
  const rotated: KeyRecord = { ...key, token_hash: next.hash };
  return [
    {
      Update: {
        TableName: tableName(),
        Key: keys.key(key.id),
        UpdateExpression: 'SET token_hash = :new',
        ConditionExpression: 'token_hash = :old AND #s = :active',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: { ':new': next.hash, ':old': key.token_hash, ':active': 'active' },
      },
    },
    { Delete: { TableName: tableName(), Key: keys.token(key.token_hash) } },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...tokenItem(rotated, next.currency, read.token ?? {}),
          kind: 'grant',
          expires_at: next.expiresAt,
          audience: next.audience,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
}
