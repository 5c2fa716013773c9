import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';
import { isConditionalCheckFailed, itemFromError, type Item } from './helpers.ts';
import {
  afterClaim,
  BUCKET_HEAD_ATTRIBUTE,
  decide,
  HEAD_ATTRIBUTE,
  HEAD_COUNT_ATTRIBUTE,
  PACKED_ATTRIBUTE,
  PREVIOUS_ATTRIBUTE,
  PREVIOUS_COUNT_ATTRIBUTE,
  ringOf,
  type RateClaim,
  type RateDecision,
} from '#domain/key/rate-limit.ts';
import type { Principal } from '#domain/principal.ts';

/**
 * The authorizer's hot path: a bearer token's hash → the key's principal and its place in the rate limit,
 * read from the token item alone (the key item is the admin side's, see key.repo.ts). Kept apart
 * so the authorizer bundle carries none of the key management code.
 */

export type AuthResult = { ok: false } | { ok: true; principal: Principal; rate: RateDecision };

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
 * confirmed against the table so that a revoked key is still 401.
 */
export async function authenticate(
  tokenHash: string,
  nowMs: number,
  limit: number,
  admits: (p: Principal) => boolean = () => true,
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
    if (state.status !== 'active') {
      if (fresh) return { ok: false };
      state = undefined;
      continue;
    }
    const rate = decide(ringOf(state), nowMs, limit);
    if (!admits(principalOf(state)) || !rate.claim) {
      // A refusal (403 or 429) from a stale cache is confirmed against the table (the key may be revoked: 401 wins).
      if (!fresh) {
        state = undefined;
        continue;
      }
      return { ok: true, principal: principalOf(state), rate };
    }
    try {
      const out = await db().send(new UpdateCommand(claimUpdate(tokenHash, rate.claim, nowMs)));
      remember(tokenHash, out.Attributes);
      return {
        ok: true,
        // The item as this request left it: a setting the admin just changed applies at once.
        principal: principalOf(out.Attributes ?? state),
        rate: { allowed: true, limit, ...afterClaim(out.Attributes ?? {}, nowMs, limit) },
      };
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      state = itemFromError(err.Item);
      fresh = true;
      remember(tokenHash, state);
      if (!state) return { ok: false };
    }
  }
  // Still colliding after several tries: the key is bursting far beyond its allowance. Ask it to
  // come back in a second rather than fail the request with a 500 (a key no longer active: 401).
  if (state?.status !== 'active') return { ok: false };
  return {
    ok: true,
    principal: principalOf(state!),
    rate: { allowed: false, limit, remaining: 0, resetSeconds: 1 },
  };
}

/**
 * The conditional UpdateItem that admits a request (see the ring in shared/domain/key/rate-limit.ts):
 * it joins the head second's count or moves the head, stamps last_used_at and counts `uses`, which
 * lets a rotation know that no request slipped in between its read and its write. Operands read
 * the item as it was before the write, so a move copies the old head's final count (`rq = rn`).
 */
function claimUpdate(tokenHash: string, claim: RateClaim, nowMs: number) {
  const names: Record<string, string> = {};
  const name = (attribute: string) => {
    names[`#${attribute}`] = attribute;
    return `#${attribute}`;
  };
  const values: Record<string, unknown> = { ':active': 'active', ':iso': new Date(nowMs).toISOString(), ':one': 1 };
  const sets = ['last_used_at = :iso'];
  const removes = claim.removeLegacy.map(name);
  const conditions = [`${name('status')} = :active`];
  const head = name(HEAD_ATTRIBUTE);
  const headCount = name(HEAD_COUNT_ATTRIBUTE);
  if (claim.head === undefined) conditions.push(`attribute_not_exists(${head})`);
  else {
    conditions.push(`${head} = :head`);
    values[':head'] = claim.head;
  }
  if (claim.bucketHead === null) conditions.push(`attribute_not_exists(${name(BUCKET_HEAD_ATTRIBUTE)})`);
  else if (claim.bucketHead !== undefined) {
    conditions.push(`${name(BUCKET_HEAD_ATTRIBUTE)} = :bucketHead`);
    values[':bucketHead'] = claim.bucketHead;
  }
  if (claim.move) {
    const { from, count, packed } = claim.move;
    sets.push(`${head} = :second`);
    values[':second'] = claim.second;
    if (from?.second === claim.second) {
      // An earlier form's head is this second: its count carries on in `rn`, this request added.
      sets.push(`${headCount} = if_not_exists(${name(from.attribute)}, :zero) + :one`);
      values[':zero'] = 0;
    } else {
      sets.push(`${headCount} = :count`);
      values[':count'] = count;
      if (from) {
        sets.push(
          `${name(PREVIOUS_ATTRIBUTE)} = :previous`,
          `${name(PREVIOUS_COUNT_ATTRIBUTE)} = if_not_exists(${name(from.attribute)}, :zero)`,
        );
        values[':previous'] = from.second;
        values[':zero'] = 0;
      } else removes.push(name(PREVIOUS_ATTRIBUTE), name(PREVIOUS_COUNT_ATTRIBUTE));
    }
    if (packed === '') removes.push(name(PACKED_ATTRIBUTE));
    else {
      sets.push(`${name(PACKED_ATTRIBUTE)} = :packed`);
      values[':packed'] = packed;
    }
  } else {
    sets.push(`${headCount} = if_not_exists(${headCount}, :zero) + :one`);
    values[':zero'] = 0;
  }
  if (claim.guard) {
    const guarded = name(claim.guard.attribute);
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
