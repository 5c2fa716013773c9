import type { RequestContext } from '#shared/context.ts';
import { cachedToken, claimRequest, readToken, type TokenState } from '#db/key/auth.repo.ts';
import {
  ALLOWANCE_RING,
  decide,
  hashToken,
  looksLikeToken,
  SET_UP_RING,
  type RateDecision,
  type RingAttributes,
} from '#domain/key/api-key.ts';
import { audienceCovers } from '#domain/oauth/oauth.ts';
import type { Ability } from '#domain/key/abilities.ts';
import type { Principal } from '#domain/principal.ts';
import { config } from '#shared/config.ts';

/** `audience`: for an OAuth access token, the part of the API its resource covers (docs/oauth.md#tokens). */
export type AuthResult =
  | { ok: false }
  | { ok: true; principal: Principal; rate: RateDecision; audience: string | undefined };

/**
 * What a request asks of the key it names: the ability its route needs (null: none), and whether
 * it takes a place in the key's rate limit (not a request to the MCP endpoint, which counts its
 * own: docs/mcp.md#rate-limit). A request that asks for an ability the key lacks will be refused
 * (403), so it takes no place either.
 */
export interface AuthRequest {
  ability: Ability | null;
  counted: boolean;
}

/** Any valid key, counted: what a caller that names no route asks. */
const ANY_REQUEST: AuthRequest = { ability: null, counted: true };

/** Whether the request takes its place in the rate limit once the key is known. */
const served = (request: AuthRequest, p: Principal) =>
  request.counted && (request.ability === null || p.abilities.includes(request.ability));

/**
 * A bearer token → its key's principal, counting the request against the key's rate limit in the
 * same conditional write (shared/db/key/auth.repo.ts) when the key will serve the request. A token that cannot be a key is refused without a read; an OAuth access token is refused
 * outside the resource it was issued for (RFC 8707), when the caller names the API resource asked for.
 */
export async function authenticateToken(
  ctx: RequestContext,
  token: string,
  request: AuthRequest = ANY_REQUEST,
  resource?: string,
): Promise<AuthResult> {
  if (!looksLikeToken(token)) return { ok: false };
  const auth = await authenticate(ctx, hashToken(token), Date.now(), config().rateLimitPerMinute, request);
  if (auth.ok && resource !== undefined && auth.audience !== undefined && !audienceCovers(auth.audience, resource))
    return { ok: false };
  return auth;
}

/**
 * Counts an MCP request the authorizer left uncounted (it cannot see the body), with the same
 * conditional write on the token item: a tool call against the key's allowance, session set-up
 * against its own limit (docs/mcp.md#rate-limit). `{ ok: false }` for a key revoked since the
 * authorizer saw it; otherwise the rate decision of the limit it counted against.
 */
export async function claimMcpAllowance(ctx: RequestContext, token: string, setUp: boolean): Promise<AuthResult> {
  const limit = setUp ? config().mcpSetUpPerMinute : config().rateLimitPerMinute;
  return authenticate(ctx, hashToken(token), Date.now(), limit, undefined, setUp ? SET_UP_RING : ALLOWANCE_RING);
}

/** Claims lost in a row before a request is asked to come back in a second. */
const CLAIM_TRIES = 8;

/**
 * A token's hash → its key's principal and its place in the rate limit (`ring`: the key's
 * allowance, or MCP set-up's limit). From this container's last view of the token, one
 * conditional UpdateItem admits an allowed request (auth, count and last_used_at together); a
 * stale view costs one round more, since the failed condition hands back the current token, and
 * so does a parallel request of the same key that moved the count to a new second first.
 * `request`: what the request asks of the key (`AuthRequest`). A refused one (a missing
 * ability: 403) is answered without using allowance (docs/contract.md#limits), and a
 * refusal (403 or 429) decided from the cached view is confirmed against the table first, so
 * that a revoked key is still 401.
 */
export async function authenticate(
  ctx: RequestContext,
  tokenHash: string,
  nowMs: number,
  limit: number,
  request: AuthRequest = ANY_REQUEST,
  ring: RingAttributes = ALLOWANCE_RING,
): Promise<AuthResult> {
  let state = cachedToken(tokenHash, ring);
  let fresh = false;
  for (let attempt = 0; attempt < CLAIM_TRIES; attempt++) {
    if (!state) {
      state = await readToken(ctx, tokenHash, ring);
      fresh = true;
      if (!state) return { ok: false };
    }
    // An OAuth access token past its hour is refused like a revoked key (its item stays: one per grant).
    if (!state.active || (state.expiresAt !== undefined && state.expiresAt <= nowMs)) {
      if (fresh) return { ok: false };
      state = undefined;
      continue;
    }
    const rate = decide(state.ring, nowMs, limit);
    if (!served(request, state.principal) || !rate.claim) {
      if (!fresh) {
        state = undefined;
        continue;
      }
      return admitted(state, rate);
    }
    const claimed = await claimRequest(ctx, tokenHash, rate.claim, nowMs, limit, ring);
    // The token as this request left it: a setting the admin just changed applies at once.
    if (claimed.kind === 'claimed') return admitted(claimed.state ?? state, { allowed: true, limit, ...claimed.room });
    state = claimed.current;
    fresh = true;
    if (!state) return { ok: false };
  }
  // Still colliding after several tries: the key's own requests claim its count faster than one
  // conditional write at a time can take them. Ask it to come back in a second rather than fail the
  // request with a 500, saying so: its allowance need not be spent (a key no longer active: 401).
  if (!state?.active) return { ok: false };
  return admitted(state, { allowed: false, limit, remaining: 0, resetSeconds: 1, contended: true });
}

const admitted = (state: TokenState, rate: RateDecision): AuthResult => ({
  ok: true,
  principal: state.principal,
  rate,
  audience: state.audience,
});
