import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';
import { isConditionalCheckFailed, itemFromError, type Item } from './helpers.ts';
import {
  afterClaim,
  decide,
  encodeSlot,
  freeSlotBound,
  LEGACY_SLOT_MIN,
  slotAttribute,
  slotsOf,
  WINDOW_MS,
  type RateDecision,
} from '#domain/key/api-key.ts';
import type { Principal } from '#domain/principal.ts';

/**
 * The authorizer's hot path: a bearer token's hash → the key's principal and a rate-limit slot,
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
 * missing ability: 403) is answered without taking a rate-limit slot (docs/contract.md#limits), from a state
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
  // A stale cache costs one failed condition, which hands back the current item; a slot taken by
  // a parallel request of the same key costs the same and the next try picks another free slot.
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
    const rate = decide(slotsOf(state, limit), nowMs, limit);
    if (!admits(principalOf(state)) || !rate.allowed || rate.slot === undefined) {
      // A refusal (403 or 429) from a stale cache is confirmed against the table (the key may be revoked: 401 wins).
      if (!fresh) {
        state = undefined;
        continue;
      }
      return { ok: true, principal: principalOf(state), rate };
    }
    try {
      const out = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.token(tokenHash),
          // `uses` lets a rotation know that no request slipped in between its read and its write.
          UpdateExpression: 'SET #slot = :now, last_used_at = :iso ADD uses :one',
          // Free: never used, or its time is 60 s past (compact tenths of a second, or a millisecond
          // epoch stored before the compact encoding).
          ConditionExpression:
            '(attribute_not_exists(#slot) OR #slot <= :free OR (#slot >= :legacy AND #slot <= :cutoff)) AND #s = :active',
          ExpressionAttributeNames: { '#slot': slotAttribute(rate.slot), '#s': 'status' },
          ExpressionAttributeValues: {
            ':now': encodeSlot(nowMs),
            ':free': freeSlotBound(nowMs),
            ':legacy': LEGACY_SLOT_MIN,
            ':cutoff': nowMs - WINDOW_MS,
            ':active': 'active',
            ':iso': new Date(nowMs).toISOString(),
            ':one': 1,
          },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      remember(tokenHash, out.Attributes);
      return {
        ok: true,
        // The item as this request left it: a setting the admin just changed applies at once.
        principal: principalOf(out.Attributes ?? state),
        rate: { ...rate, ...afterClaim(slotsOf(out.Attributes ?? {}, limit), nowMs, limit) },
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
    rate: { allowed: false, slot: undefined, limit, remaining: 0, resetSeconds: 1 },
  };
}
