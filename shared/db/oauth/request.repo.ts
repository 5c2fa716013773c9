import type { RequestContext } from '#shared/context.ts';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Ability } from '#domain/key/abilities.ts';
import { REQUEST_SECONDS } from '#domain/oauth/oauth.ts';
import { send, tableName } from '../core/client.ts';
import { batchGet, itemKey, type Item, namedTransaction } from '../core/helpers.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { putGrantKey, type NewGrantKey } from '../key/grant.repo.ts';
import { nextKeyId } from '../key/repo.ts';
import { keys } from '../keys.ts';
import type { CodeGrant } from './token.repo.ts';
import { conditionalWrite, ttlOf } from './write.ts';

/**
 * Authorization requests (docs/oauth.md#the-flow): stored by the authorize page under their
 * approval code, listed for the store admin, approved (the decision written on the request) or
 * denied, and redeemed by the waiting page for an authorization code, which is when the grant's
 * key is written: an approval never picked up leaves no key behind.
 */

type RequestStatus = 'pending' | 'approved' | 'denied' | 'redeemed';

/** What the store admin approved: the key the grant becomes when the waiting page picks it up. */
export type ApprovedGrant = Pick<
  NewGrantKey,
  'store_id' | 'currency' | 'name' | 'abilities' | 'mcp' | 'writes_per_hour' | 'status_changes_per_hour'
>;

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
  /** The grant's key id, drawn at approval; the key itself is written at redemption. */
  key_id: number | null;
  /** The store admin's decision, from approval on. */
  grant: ApprovedGrant | null;
  /** When /oauth/authorize stored it (ms since the epoch). */
  created_at: number;
  /** The caller of /oauth/authorize as the gateway saw it (shown to the store admin). */
  caller_ip: string | null;
  caller_user_agent: string | null;
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
    grant: i.grant ?? null,
    // Stored since the admin was shown the caller; a request from before has only its expiry.
    created_at: i.created_at ?? i.expires_at - REQUEST_SECONDS * 1000,
    caller_ip: i.caller_ip ?? null,
    caller_user_agent: i.caller_user_agent ?? null,
    expires_at: i.expires_at,
  };
}

/** false: the approval code is taken (the caller draws another). */
export async function putRequest(ctx: RequestContext, request: PendingRequest): Promise<boolean> {
  return conditionalWrite(() =>
    send(
      ctx,
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
    ),
  );
}

export async function getRequest(ctx: RequestContext, approvalCode: string): Promise<PendingRequest | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.oauthRequest(approvalCode), ConsistentRead: true }),
  );
  return out.Item ? toRequest(out.Item) : undefined;
}

/** A page of the admin's list: at most `limit` requests, after `cursor` (the previous page's `nextCursor`). */
export interface RequestPage {
  limit: number;
  cursor: string | null;
}

/**
 * The requests still waiting for the store admin, newest first (`oauth requests`), a page at a
 * time: the index holds the unexpired ones above `nowMs` and projects `status`; the items of the
 * page come in one BatchGetItem. `nextCursor`: where the next page starts, null on the last.
 */
export async function listPendingRequests(
  ctx: RequestContext,
  nowMs: number,
  page: RequestPage,
): Promise<{ requests: PendingRequest[]; nextCursor: string | null }> {
  const index = keys.oauthRequestsIndex(nowMs);
  const entries: Item[] = [];
  let start: Item | undefined;
  // Read the index until one entry more than the page (there is a next page) or its end.
  do {
    const out = await send(
      ctx,
      new QueryCommand({
        TableName: tableName(),
        IndexName: TABLE.gsi1.indexName,
        // The cursor is the last entry of the previous page: BETWEEN includes it, so it is skipped below.
        KeyConditionExpression:
          page.cursor === null
            ? 'gsi1pk = :pk AND gsi1sk > :after'
            : 'gsi1pk = :pk AND gsi1sk BETWEEN :after AND :cursor',
        FilterExpression: '#s = :pending',
        ExpressionAttributeNames: { '#s': 'status' },
        ExpressionAttributeValues: {
          ':pk': index.gsi1pk,
          ':after': index.after,
          ':pending': 'pending',
          ...(page.cursor === null ? {} : { ':cursor': page.cursor }),
        },
        ScanIndexForward: false,
        Limit: page.limit + 2,
        ExclusiveStartKey: start,
      }),
    );
    entries.push(...(out.Items ?? []).filter((i) => i.gsi1sk !== page.cursor));
    start = out.LastEvaluatedKey;
  } while (start && entries.length <= page.limit);
  const shown = entries.slice(0, page.limit);
  const found = await batchGet(
    ctx,
    shown.map((i) => ({ pk: i.pk, sk: i.sk })),
  );
  return {
    requests: shown
      .map((i) => found.get(itemKey({ pk: i.pk, sk: i.sk })))
      .filter((i): i is Item => i !== undefined && i.status === 'pending' && i.expires_at > nowMs)
      .map(toRequest),
    nextCursor: entries.length > page.limit ? (shown.at(-1)!.gsi1sk as string) : null,
  };
}

const stillPending = {
  condition: '#s = :pending AND expires_at > :now',
  names: { '#s': 'status' },
};

/** Denies a pending request; false when it is no longer pending (decided, redeemed or expired). */
export async function denyRequest(ctx: RequestContext, approvalCode: string, nowMs: number): Promise<boolean> {
  return conditionalWrite(() =>
    send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.oauthRequest(approvalCode),
        UpdateExpression: 'SET #s = :denied',
        ConditionExpression: stillPending.condition,
        ExpressionAttributeNames: stillPending.names,
        ExpressionAttributeValues: { ':pending': 'pending', ':now': nowMs, ':denied': 'denied' },
      }),
    ),
  );
}

/**
 * The store admin's approval: the request moves to `approved` with the decision and the grant's
 * key id (drawn here, so the admin is told it at once), only while it is pending and unexpired (a
 * code approves once). No key is written yet: the waiting page's redemption writes it, in the same
 * transaction as the authorization code. undefined: the request was decided or expired meanwhile.
 */
export async function approveRequest(
  ctx: RequestContext,
  approvalCode: string,
  grant: ApprovedGrant,
  nowMs: number,
): Promise<number | undefined> {
  const keyId = await nextKeyId(ctx);
  const approved = await conditionalWrite(() =>
    send(
      ctx,
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.oauthRequest(approvalCode),
        UpdateExpression: 'SET #s = :approved, key_id = :id, #g = :grant',
        ConditionExpression: stillPending.condition,
        ExpressionAttributeNames: { ...stillPending.names, '#g': 'grant' },
        ExpressionAttributeValues: {
          ':pending': 'pending',
          ':now': nowMs,
          ':approved': 'approved',
          ':id': keyId,
          ':grant': grant,
        },
      }),
    ),
  );
  return approved ? keyId : undefined;
}

/** What the redemption writes beside the code: the grant's key, which nobody holds a token of yet. */
export type GrantKey = Pick<NewGrantKey, 'placeholderTokenHash' | 'webhookSecret' | 'now'>;

/**
 * The waiting page's pick-up of an approval, one transaction: the request moves to `redeemed`
 * (only from `approved`, only with the page's secret, only before it expires), the authorization
 * code is written, and so is the grant's key (key item + a token item that has already expired).
 * So an approval that is never picked up, or picked up too late, leaves no key; and a key never
 * exists without the code that can start its tokens. false: not redeemable (any more).
 */
export async function redeemRequest(
  ctx: RequestContext,
  request: PendingRequest & { key_id: number; grant: ApprovedGrant },
  codeHash: string,
  code: CodeGrant,
  key: GrantKey,
  nowMs: number,
): Promise<boolean> {
  const tx = namedTransaction([
    [
      'request',
      {
        Update: {
          TableName: tableName(),
          Key: keys.oauthRequest(request.approval_code),
          UpdateExpression: 'SET #s = :redeemed',
          ConditionExpression: '#s = :approved AND secret_hash = :h AND expires_at > :now',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: {
            ':approved': 'approved',
            ':redeemed': 'redeemed',
            ':h': request.secret_hash,
            ':now': nowMs,
          },
        },
      },
    ],
    [
      'code',
      {
        Put: {
          TableName: tableName(),
          Item: { ...keys.oauthCode(codeHash), type: ENTITY.oauthCode, ...code, ttl: ttlOf(code.expires_at) },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ],
    [
      'key',
      putGrantKey({
        id: request.key_id,
        ...request.grant,
        client_id: request.client_id,
        resource: request.resource,
        audience: request.audience,
        ...key,
      }),
    ],
  ]);
  // Whichever part refused (the request redeemed, denied or expired meanwhile), nothing is written.
  return (await tx.send(ctx)) === undefined;
}
