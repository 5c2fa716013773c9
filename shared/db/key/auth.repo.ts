import type { RequestContext } from '#shared/context.ts';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { keys } from '../keys.ts';
import { isConditionalCheckFailed, itemFromError, type Item } from '../core/helpers.ts';
import {
  afterClaim,
  bucketAttribute,
  ringOf,
  type RateClaim,
  type Ring,
  type RingAttributes,
} from '#domain/key/api-key.ts';
import type { Principal } from '#domain/principal.ts';

/**
 * The authorizer's hot path: a bearer token's hash → the key's principal and its place in the rate limit,
 * read from the token item alone (the key item is the admin side's, see key/repo.ts). Kept apart
 * so the authorizer bundle carries none of the key management code. Each function makes one
 * attempt; the use case (shared/app/authenticate.ts) decides from what it answers.
 */

/** A token item as a request is admitted from. */
export interface TokenState {
  principal: Principal;
  /** Not revoked, nor rotated away. */
  active: boolean;
  /** For an OAuth access token, when its hour ends (epoch ms). */
  expiresAt: number | undefined;
  /** The token's counts in the ring the request takes its place in. */
  ring: Ring;
  /** For an OAuth access token, the part of the API its resource covers (docs/oauth.md#tokens). */
  audience: string | undefined;
}

/**
 * Last seen state of each token in this container. With it, an allowed request costs one
 * conditional UpdateItem (auth + rate limit + last_used_at together); a stale entry costs one
 * extra round trip, because the failed condition hands back the current item.
 */
const tokenCache = new Map<string, Item>();
const TOKEN_CACHE_MAX = 1000;

function remember(hash: string, item: Item | undefined) {
  if (!item) {
    tokenCache.delete(hash);
    return;
  }
  if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.delete(tokenCache.keys().next().value as string);
  tokenCache.set(hash, item);
}

function principalOf(item: Item): Principal {
  return {
    keyId: item.key_id,
    storeId: item.store_id,
    abilities: item.abilities,
    currency: item.currency_code ?? null,
    ...(item.mcp === 'read-only' ? { mcpReadOnly: true } : {}),
    ...(item.writes_per_hour != null || item.status_changes_per_hour != null
      ? { budget: { writes: item.writes_per_hour ?? null, statusChanges: item.status_changes_per_hour ?? null } }
      : {}),
  };
}

const stateOf = (item: Item, ring: RingAttributes): TokenState => ({
  principal: principalOf(item),
  active: item.status === 'active',
  expiresAt: item.expires_at,
  ring: ringOf(item, ring),
  audience: typeof item.audience === 'string' ? item.audience : undefined,
});

/** The token as this container last saw it, without a round trip: a guess the conditional write checks. */
export function cachedToken(tokenHash: string, ring: RingAttributes): TokenState | undefined {
  const item = tokenCache.get(tokenHash);
  return item && stateOf(item, ring);
}

/** The token item read strongly consistent (one GetItem); undefined when no token has this hash. */
export async function readToken(
  ctx: RequestContext,
  tokenHash: string,
  ring: RingAttributes,
): Promise<TokenState | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.token(tokenHash), ConsistentRead: true }),
  );
  remember(tokenHash, out.Item);
  return out.Item && stateOf(out.Item, ring);
}

/**
 * How a claim ended: `claimed`, with the token as the write left it (undefined if the store
 * returned nothing) and the room left in the window; or `lost` (the token changed since it was
 * read: revoked, or another request of the key moved its count), with the token as the failed
 * condition handed it back (undefined: the token is gone).
 */
export type ClaimOutcome =
  | { kind: 'claimed'; state: TokenState | undefined; room: { remaining: number; resetSeconds: number } }
  | { kind: 'lost'; current: TokenState | undefined };

/** One conditional UpdateItem that takes the request's place in the token's count (`claim`, decided from a state read). */
export async function claimRequest(
  ctx: RequestContext,
  tokenHash: string,
  claim: RateClaim,
  nowMs: number,
  limit: number,
  ring: RingAttributes,
): Promise<ClaimOutcome> {
  try {
    const out = await send(ctx, new UpdateCommand(claimUpdate(tokenHash, claim, nowMs, ring)));
    remember(tokenHash, out.Attributes);
    return {
      kind: 'claimed',
      state: out.Attributes && stateOf(out.Attributes, ring),
      room: afterClaim(out.Attributes ?? {}, nowMs, limit, ring),
    };
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
    const current = itemFromError(err.Item);
    remember(tokenHash, current);
    return { kind: 'lost', current: current && stateOf(current, ring) };
  }
}

/**
 * The conditional UpdateItem that admits a request (see the ring in shared/domain/key/api-key.ts):
 * it joins the head second's count or moves the head, stamps last_used_at and counts `uses`, which
 * lets a rotation know that no request slipped in between its read and its write.
 */
function claimUpdate(tokenHash: string, claim: RateClaim, nowMs: number, ring: RingAttributes) {
  const names: Record<string, string> = {};
  const name = (attribute: string) => {
    names[`#${attribute}`] = attribute;
    return `#${attribute}`;
  };
  const values: Record<string, unknown> = { ':active': 'active', ':iso': new Date(nowMs).toISOString(), ':one': 1 };
  const sets = ['last_used_at = :iso'];
  const removes = claim.removeLegacy.map(name);
  const conditions = [`${name('status')} = :active`];
  const head = name(ring.head);
  if (claim.head === undefined) conditions.push(`attribute_not_exists(${head})`);
  else {
    conditions.push(`${head} = :head`);
    values[':head'] = claim.head;
  }
  if (claim.move) {
    sets.push(`${head} = :second`);
    values[':second'] = claim.second;
    claim.move.counts.forEach(([second, count], i) => {
      sets.push(`${name(bucketAttribute(second, ring))} = :n${i}`);
      values[`:n${i}`] = count;
    });
    removes.push(...claim.move.clear.map((second) => name(bucketAttribute(second, ring))));
  } else {
    const bucket = name(bucketAttribute(claim.second, ring));
    sets.push(`${bucket} = if_not_exists(${bucket}, :zero) + :one`);
    values[':zero'] = 0;
  }
  if (claim.guard) {
    const guarded = name(bucketAttribute(claim.guard.second, ring));
    conditions.push(`(attribute_not_exists(${guarded}) OR ${guarded} < :cap)`);
    values[':cap'] = claim.guard.cap;
  }
  return {
    TableName: tableName(),
    Key: keys.token(tokenHash),
    UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''} ADD uses :one`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValues: 'ALL_NEW' as const,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}
