import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Ability } from '#domain/key/abilities.ts';
import type { KeyRecord, McpMode } from '#domain/key/api-key.ts';
import type { OAuthClient } from '#domain/oauth/oauth.ts';
import { db, tableName } from '../core/client.ts';
import {
  batchGet,
  cancellationReasons,
  isConditionalCheckFailed,
  itemKey,
  queryAll,
  type Item,
} from '../core/helpers.ts';
import { tokenItem } from '../key/item.ts';
import { requireKey } from '../key/repo.ts';
import { keys } from '../keys.ts';
import { nextInSequence } from '../core/sequence.ts';
import { ENTITY } from '../core/table.ts';

type TransactWriteItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];

/**
 * The authorization server's items (docs/oauth.md#items-in-the-single-table): registered clients,
 * pending requests, codes, refresh tokens; and the grant, which is a key with an expiring token item.
 */

const ttlOf = (ms: number) => Math.ceil(ms / 1000);

export async function putClient(client: OAuthClient, nowMs: number, keepSeconds: number): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...keys.oauthClient(client.client_id),
        type: ENTITY.oauthClient,
        ...client,
        ttl: ttlOf(nowMs) + keepSeconds,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export async function getClient(clientId: string, nowMs: number): Promise<OAuthClient | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.oauthClient(clientId) }));
  const i = out.Item;
  if (!i || i.ttl * 1000 <= nowMs) return undefined;
  return { client_id: i.client_id, client_name: i.client_name, redirect_uris: i.redirect_uris };
}

export type RequestStatus = 'pending' | 'approved' | 'denied' | 'redeemed';

/** An authorization request waiting for (or past) the store admin's decision. */
export interface PendingRequest {
  approval_code: string;
  secret_hash: string;
  client_id: string;
  client_name: string;
  redirect_uri: string;
  code_challenge: string;
  state: string | null;
  resource: string;
  audience: string;
  abilities: Ability[];
  status: RequestStatus;
  key_id: number | null;
  expires_at: number;
}

function toRequest(i: Item): PendingRequest {
  return {
    approval_code: i.approval_code,
    secret_hash: i.secret_hash,
    client_id: i.client_id,
    client_name: i.client_name,
    redirect_uri: i.redirect_uri,
    code_challenge: i.code_challenge,
    state: i.state ?? null,
    resource: i.resource,
    audience: i.audience,
    abilities: i.abilities,
    status: i.status,
    key_id: i.key_id ?? null,
    expires_at: i.expires_at,
  };
}

/** false: the approval code is taken (the caller draws another). */
export async function putRequest(request: PendingRequest): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...keys.oauthRequest(request.approval_code),
          ...keys.oauthRequestIndexEntry(request.expires_at, request.approval_code),
          type: ENTITY.oauthRequest,
          ...request,
          ttl: ttlOf(request.expires_at),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

export async function getRequest(approvalCode: string): Promise<PendingRequest | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.oauthRequest(approvalCode), ConsistentRead: true }),
  );
  return out.Item ? toRequest(out.Item) : undefined;
}

/**
 * The requests still waiting for the store admin, newest first (`oauth requests`): the index holds
 * the unexpired ones above `nowMs` and projects `status`; the items themselves come in one BatchGetItem.
 */
export async function listPendingRequests(nowMs: number): Promise<PendingRequest[]> {
  const index = keys.oauthRequestsIndex(nowMs);
  const entries = await queryAll({
    TableName: tableName(),
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk AND gsi1sk > :after',
    FilterExpression: '#s = :pending',
    ExpressionAttributeNames: { '#s': 'status' },
    ExpressionAttributeValues: { ':pk': index.gsi1pk, ':after': index.after, ':pending': 'pending' },
    ScanIndexForward: false,
  });
  const found = await batchGet(entries.map((i) => ({ pk: i.pk, sk: i.sk })));
  return entries
    .map((i) => found.get(itemKey({ pk: i.pk, sk: i.sk })))
    .filter((i): i is Item => i !== undefined && i.status === 'pending' && i.expires_at > nowMs)
    .map(toRequest);
}

const stillPending = {
  condition: '#s = :pending AND expires_at > :now',
  names: { '#s': 'status' },
};

/** Denies a pending request; false when it is no longer pending (decided, redeemed or expired). */
export async function denyRequest(approvalCode: string, nowMs: number): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.oauthRequest(approvalCode),
        UpdateExpression: 'SET #s = :denied',
        ConditionExpression: stillPending.condition,
        ExpressionAttributeNames: stillPending.names,
        ExpressionAttributeValues: { ':pending': 'pending', ':now': nowMs, ':denied': 'denied' },
      }),
    );
    return true;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return false;
    throw err;
  }
}

export interface GrantInput {
  storeId: string;
  currency: string | null;
  name: string;
  abilities: Ability[];
  mcp: McpMode;
  writesPerHour: number | null;
  statusChangesPerHour: number | null;
  /** The hash of a token nobody holds: the grant has no access token until its code is exchanged. */
  placeholderTokenHash: string;
  webhookSecret: string;
  now: string;
}

/**
 * The approval: the grant's key (key item + a token item that has already expired) and the
 * request's move to `approved` in one transaction, so a code approves once and never leaves a
 * grant behind that no request points at.
 */
export async function approveRequest(
  approvalCode: string,
  input: GrantInput,
  request: PendingRequest,
  nowMs: number,
): Promise<{ ok: true; key: KeyRecord } | { ok: false }> {
  const id = await nextInSequence(keys.keySequence());
  const record: KeyRecord = {
    id,
    store_id: input.storeId,
    name: input.name,
    abilities: input.abilities,
    status: 'active',
    webhook_url: null,
    events: [],
    exclude_own: false,
    mcp: input.mcp,
    writes_per_hour: input.writesPerHour,
    status_changes_per_hour: input.statusChangesPerHour,
    created_at: input.now,
    revoked_at: null,
    last_used_at: null,
    token_hash: input.placeholderTokenHash,
    webhook_secret: input.webhookSecret,
    previous_webhook_secret: null,
    previous_webhook_secret_expires_at: null,
  };
  const { last_used_at: _l, ...stored } = record;
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.oauthRequest(approvalCode),
              UpdateExpression: 'SET #s = :approved, key_id = :id',
              ConditionExpression: stillPending.condition,
              ExpressionAttributeNames: stillPending.names,
              ExpressionAttributeValues: { ':pending': 'pending', ':now': nowMs, ':approved': 'approved', ':id': id },
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...keys.key(id),
                ...keys.keyIndexEntry(input.storeId, id),
                type: ENTITY.key,
                ...stored,
                kind: 'grant',
                client_id: request.client_id,
                resource: request.resource,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: { ...tokenItem(record, input.currency), kind: 'grant', expires_at: 0, audience: request.audience },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
    return { ok: true, key: record };
  } catch (err) {
    if (cancellationReasons(err)?.[0]?.Code === 'ConditionalCheckFailed') return { ok: false };
    throw err;
  }
}

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

/**
 * The waiting page's pick-up of an approval: the request moves to `redeemed` (only from
 * `approved`, only with the page's secret) and the authorization code is written, together.
 */
export async function redeemRequest(request: PendingRequest, codeHash: string, code: CodeGrant): Promise<boolean> {
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.oauthRequest(request.approval_code),
              UpdateExpression: 'SET #s = :redeemed',
              ConditionExpression: '#s = :approved AND secret_hash = :h',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: {
                ':approved': 'approved',
                ':redeemed': 'redeemed',
                ':h': request.secret_hash,
              },
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.oauthCode(codeHash), type: ENTITY.oauthCode, ...code, ttl: ttlOf(code.expires_at) },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
    return true;
  } catch (err) {
    if (cancellationReasons(err)) return false;
    throw err;
  }
}

/** A code as read back: `used` once exchanged (kept so that a second exchange revokes the grant). */
export async function getCode(codeHash: string): Promise<(CodeGrant & { used: boolean }) | undefined> {
  const out = await db().send(
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

export interface RefreshRecord {
  key_id: number;
  client_id: string;
  resource: string;
  audience: string;
  status: 'active' | 'used';
  expires_at: number;
}

export async function getRefresh(tokenHash: string): Promise<RefreshRecord | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.oauthRefresh(tokenHash), ConsistentRead: true }),
  );
  const i = out.Item;
  return i
    ? {
        key_id: i.key_id,
        client_id: i.client_id,
        resource: i.resource,
        audience: i.audience,
        status: i.status,
        expires_at: i.expires_at,
      }
    : undefined;
}

export interface TokenIssue {
  accessHash: string;
  accessExpiresAt: number;
  refreshHash: string;
  refresh: RefreshRecord;
  currency: string | null;
}

/**
 * What consumes the old credential in the issuing transaction: a code or a refresh token, each
 * marked used. A used code is kept until `keepUntilMs`, so that presenting it again is recognised.
 */
export type Spent = { code: string; keepUntilMs: number } | { refresh: string };

/**
 * Issues a grant's new access and refresh tokens in one transaction with spending what was
 * presented: the old access token item goes (its rate-limit ring moves to the new one), the key
 * item points at the new hash, guarded on being active with the hash read (a revoke in between
 * wins), and the code or the refresh token is marked used, guarded on still being there and
 * unused (a parallel exchange of the same code or refresh token loses).
 */
export async function issueTokens(
  keyId: number,
  spent: Spent,
  issue: TokenIssue,
): Promise<{ ok: true } | { ok: false; reason: 'revoked' | 'spent' }> {
  const key = await requireKey(keyId);
  if (key.status !== 'active') return { ok: false, reason: 'revoked' };
  const old = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.token(key.token_hash), ConsistentRead: true }),
  );
  const rotated: KeyRecord = { ...key, token_hash: issue.accessHash };
  const spend: TransactWriteItem =
    'code' in spent
      ? {
          Update: {
            TableName: tableName(),
            Key: keys.oauthCode(spent.code),
            UpdateExpression: 'SET used = :used, #ttl = :ttl',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(used)',
            ExpressionAttributeNames: { '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':used': true, ':ttl': ttlOf(spent.keepUntilMs) },
          },
        }
      : {
          Update: {
            TableName: tableName(),
            Key: keys.oauthRefresh(spent.refresh),
            UpdateExpression: 'SET #s = :used',
            ConditionExpression: '#s = :active',
            ExpressionAttributeNames: { '#s': 'status' },
            ExpressionAttributeValues: { ':used': 'used', ':active': 'active' },
          },
        };
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          spend,
          {
            Update: {
              TableName: tableName(),
              Key: keys.key(keyId),
              UpdateExpression: 'SET token_hash = :new',
              ConditionExpression: 'token_hash = :old AND #s = :active',
              ExpressionAttributeNames: { '#s': 'status' },
              ExpressionAttributeValues: { ':new': issue.accessHash, ':old': key.token_hash, ':active': 'active' },
            },
          },
          { Delete: { TableName: tableName(), Key: keys.token(key.token_hash) } },
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...tokenItem(rotated, issue.currency, old.Item ?? {}),
                kind: 'grant',
                expires_at: issue.accessExpiresAt,
                audience: issue.refresh.audience,
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...keys.oauthRefresh(issue.refreshHash),
                type: ENTITY.oauthRefresh,
                ...issue.refresh,
                ttl: ttlOf(issue.refresh.expires_at),
              },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
    return { ok: true };
  } catch (err) {
    const reasons = cancellationReasons(err);
    if (!reasons) throw err;
    return { ok: false, reason: reasons[0]?.Code === 'ConditionalCheckFailed' ? 'spent' : 'revoked' };
  }
}
