import type { RequestContext } from '#shared/context.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { batchGet, itemKey, namedTransaction, type TransactItem } from '../core/helpers.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { type GrantKeyRead, replaceGrantToken } from '../key/grant.repo.ts';
import { type KeepClient, keepClientAction } from './client.repo.ts';
import { keys } from '../keys.ts';
import { ttlOf } from './write.ts';

/**
 * What the token endpoint reads and writes (docs/oauth.md#tokens): authorization codes, refresh
 * tokens, and the grant's access token, which is its key's token item with an expiry.
 */

/** What an authorization code stands for, checked at the token endpoint. */
export interface CodeGrant {
  key_id: number;
  client_id: string;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  audience: string;
  expires_at: number;
}

/** A code as read back: `used` once exchanged (kept so that a second exchange revokes the grant). */
export async function getCode(
  ctx: RequestContext,
  codeHash: string,
): Promise<(CodeGrant & { used: boolean }) | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.oauthCode(codeHash), ConsistentRead: true }),
  );
  const i = out.Item;
  return i
    ? {
        key_id: i.key_id,
        client_id: i.client_id,
        redirect_uri: i.redirect_uri,
        code_challenge: i.code_challenge,
        resource: i.resource,
        audience: i.audience,
        expires_at: i.expires_at,
        used: i.used === true,
      }
    : undefined;
}

/** What a refresh token stands for. */
export interface RefreshGrant {
  key_id: number;
  client_id: string;
  resource: string;
  audience: string;
  expires_at: number;
}

/**
 * A refresh token as read back. Once rotated it is `used`, with when (`rotated_at`), and kept for
 * its 30 days so that its reuse is recognised (and revokes the grant). The pair it was rotated to,
 * sealed under the rotated token itself (`successor`, shared/domain/oauth), is an item of its own
 * beside it that lives only for the grace window (its TTL): within the window a parallel refresh
 * with the rotated token gets that same pair; after it, the pair is no longer read (null here,
 * whether or not DynamoDB's TTL sweep removed it yet), and nothing secret outlives the window.
 */
export interface RefreshRecord extends RefreshGrant {
  status: 'active' | 'used';
  rotated_at: number | null;
  successor: string | null;
}

/** The refresh token and, while its grace window lasts (at `nowMs`), its sealed successor: one BatchGetItem. */
export async function getRefresh(
  ctx: RequestContext,
  tokenHash: string,
  nowMs: number,
): Promise<RefreshRecord | undefined> {
  const found = await batchGet(ctx, [keys.oauthRefresh(tokenHash), keys.oauthSuccessor(tokenHash)]);
  const i = found.get(itemKey(keys.oauthRefresh(tokenHash)));
  if (!i) return undefined;
  const next = found.get(itemKey(keys.oauthSuccessor(tokenHash)));
  return {
    key_id: i.key_id,
    client_id: i.client_id,
    resource: i.resource,
    audience: i.audience,
    status: i.status,
    expires_at: i.expires_at,
    rotated_at: i.rotated_at ?? null,
    // A token rotated before successors had items of their own holds its successor itself.
    successor: next ? (next.expires_at > nowMs ? next.sealed : null) : (i.successor ?? null),
  };
}

export interface TokenIssue {
  accessHash: string;
  accessExpiresAt: number;
  /** The part of the API the new access token covers: the grant's, or the MCP endpoint under it. */
  accessAudience: string;
  refreshHash: string;
  refresh: RefreshGrant;
  currency: string | null;
  /** A code exchange keeps the client's registration (docs/oauth.md#bounds), in the same transaction. */
  keepClient?: KeepClient;
}

/**
 * What consumes the old credential in the issuing transaction: a code or a refresh token, each
 * marked used. A used code is kept until `keepUntilMs`, so that presenting it again is recognised.
 * A rotated refresh token keeps when it was rotated; its successor pair, sealed, is kept beside it
 * until `successorUntilMs` (the end of the grace window).
 */
export type Spent =
  | { code: string; keepUntilMs: number }
  | { refresh: string; rotatedAtMs: number; successor: string; successorUntilMs: number };

/**
 * Issues a grant's new access and refresh tokens in one transaction with spending what was
 * presented: the old access token item goes (its rate-limit ring moves to the new one), the key
 * item points at the new hash, guarded on being active with the hash read (a revoke in between
 * wins), and the code or the refresh token is marked used, guarded on still being there and
 * unused (a parallel exchange of the same code or refresh token loses).
 *
 * With `keepClient`, the client's registration is kept longer in the same transaction.
 *
 * The refusals: `spent`, the code or refresh token was used meanwhile; `unkept`, the client's
 * registration could not be kept (it is gone, or kept longer already); `conflict`, anything else
 * that cancelled the transaction (the key changed or was revoked since `read`, or a parallel
 * transaction on the same items). Nothing is written on a refusal. The use case decides what
 * follows; a conflict alone is never a revocation.
 */
export async function issueTokens(
  ctx: RequestContext,
  read: GrantKeyRead,
  spent: Spent,
  issue: TokenIssue,
): Promise<{ ok: true } | { ok: false; reason: 'spent' | 'unkept' | 'conflict' }> {
  const spend: TransactItem[] =
    'code' in spent
      ? [
          {
            Update: {
              TableName: tableName(),
              Key: keys.oauthCode(spent.code),
              UpdateExpression: 'SET used = :used, #ttl = :ttl',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used)',
              ExpressionAttributeNames: { '#ttl': TABLE.ttlAttribute },
              ExpressionAttributeValues: { ':used': true, ':ttl': ttlOf(spent.keepUntilMs) },
            },
          },
        ]
      : [
          {
            Update: {
              TableName: tableName(),
              Key: keys.oauthRefresh(spent.refresh),
              UpdateExpression: 'SET #s = :used, rotated_at = :at',
              ConditionExpression: '#s = :active',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':used': 'used', ':active': 'active', ':at': spent.rotatedAtMs },
            },
          },
          // With the flip to `used`, so whoever reads `used` within the window can answer the pair.
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...keys.oauthSuccessor(spent.refresh),
                type: ENTITY.oauthSuccessor,
                sealed: spent.successor,
                expires_at: spent.successorUntilMs,
                ttl: ttlOf(spent.successorUntilMs),
              },
            },
          },
        ];
  const tx = namedTransaction([
    ['spend', spend],
    [
      'key',
      replaceGrantToken(read, {
        hash: issue.accessHash,
        expiresAt: issue.accessExpiresAt,
        audience: issue.accessAudience,
        currency: issue.currency,
      }),
    ],
    [
      'refresh',
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.oauthRefresh(issue.refreshHash),
            type: ENTITY.oauthRefresh,
            ...issue.refresh,
            status: 'active',
            ttl: ttlOf(issue.refresh.expires_at),
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ],
    ['client', issue.keepClient && keepClientAction(issue.keepClient)],
  ]);
  const cancelled = await tx.send(ctx);
  if (!cancelled) return { ok: true };
  if (cancelled.failed('spend')) return { ok: false, reason: 'spent' };
  return { ok: false, reason: cancelled.failed('client') ? 'unkept' : 'conflict' };
}
