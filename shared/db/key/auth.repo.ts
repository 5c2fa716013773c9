import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../core/client.ts';
import { keys } from '../keys.ts';
import { isConditionalCheckFailed, itemFromError, type Item } from '../core/helpers.ts';
import {
  afterClaim,
  ALLOWANCE_RING,
  bucketAttribute,
  decide,
  ringOf,
  type RateClaim,
  type RateDecision,
  type RingAttributes,
} from '#domain/key/api-key.ts';
import type { Principal } from '#domain/principal.ts';

/**
 * The authorizer's hot path: a bearer token's hash → the key's principal and its place in the rate limit,
 * read from the token item alone (the key item is the admin side's, see key/repo.ts). Kept apart
 * so the authorizer bundle carries none of the key management code.
 */

/** `audience`: for an OAuth access token, the part of the API its resource covers (docs/oauth.md#tokens). */
export type AuthResult = { ok: false } | { ok: true; principal: Principal; rate: RateDecision; audience?: string };

interface TokenState {
  item: Item;
}

/**
 * Last seen state of each token in this container. With it, an allowed request costs one
 * conditional UpdateItem (auth + rate limit + last_used_at together); a stale entry costs one
 * extra round trip, because the failed condition hands back the current item.
 */
const tokenCache = new Map<string, TokenState>();
const TOKEN_CACHE_MAX = 1000;

function remember(hash: string, item: Item | undefined) {
  if (!item) {
    tokenCache.delete(hash);
    return;
  }
  if (tokenCache.size >= TOKEN_CACHE_MAX) tokenCache.delete(tokenCache.keys().next().value as string);
  tokenCache.set(hash, { item });
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

/**
 * `admits`: whether the request will be served at all once the key is known. A refused one (a
 * missing ability: 403) is answered without using allowance (docs/contract.md#limits), from a state
 * confirmed against the table so that a revoked key is still 401. `ring`: which count the request
 * takes its place in, the key's allowance or MCP set-up's limit (SET_UP_RING).
 */
export async function authenticate(
  tokenHash: string,
  nowMs: number,
  limit: number,
  admits: (p: Principal) => boolean = () => true,
  ring: RingAttributes = ALLOWANCE_RING,
): Promise<AuthResult> {
  let state = tokenCache.get(tokenHash)?.item;
  let fresh = false;
  // A stale cache costs one failed condition, which hands back the current item; so does a
  // parallel request of the same key that moved the ring to a new second first.
  for (let attempt = 0; attempt < 8; attempt++) {
    if (!state) {
      const out = await db().send(
        new GetCommand({ TableName: tableName(), Key: keys.token(tokenHash), ConsistentRead: true }),
      );
      state = out.Item;
      fresh = true;
      remember(tokenHash, state);
      if (!state) return { ok: false };
    }
    // An OAuth access token past its hour is refused like a revoked key (its item stays: one per grant).
    if (state.status !== 'active' || (state.expires_at !== undefined && state.expires_at <= nowMs)) {
      if (fresh) return { ok: false };
      state = undefined;
      continue;
    }
    const rate = decide(ringOf(state, ring), nowMs, limit);
    if (!admits(principalOf(state)) || !rate.claim) {
      // A refusal (403 or 429) from a stale cache is confirmed against the table (the key may be revoked: 401 wins).
      if (!fresh) {
        state = undefined;
        continue;
      }
      return { ok: true, principal: principalOf(state), rate, ...audienceOf(state) };
    }
    try {
      const out = await db().send(new UpdateCommand(claimUpdate(tokenHash, rate.claim, nowMs, ring)));
      remember(tokenHash, out.Attributes);
      return {
        ok: true,
        // The item as this request left it: a setting the admin just changed applies at once.
        principal: principalOf(out.Attributes ?? state),
        rate: { allowed: true, limit, ...afterClaim(out.Attributes ?? {}, nowMs, limit, ring) },
        ...audienceOf(out.Attributes ?? state),
      };
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      state = itemFromError(err.Item);
      fresh = true;
      remember(tokenHash, state);
      if (!state) return { ok: false };
    }
  }
  // Still colliding after several tries: the key's own requests claim its count faster than one
  // conditional write at a time can take them. Ask it to come back in a second rather than fail the
  // request with a 500, saying so: its allowance need not be spent (a key no longer active: 401).
  if (state?.status !== 'active') return { ok: false };
  return {
    ok: true,
    principal: principalOf(state!),
    rate: { allowed: false, limit, remaining: 0, resetSeconds: 1, contended: true },
    ...audienceOf(state!),
  };
}

const audienceOf = (item: Item) => (typeof item.audience === 'string' ? { audience: item.audience } : {});

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
