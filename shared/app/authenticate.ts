import { authenticate, type AuthResult } from '#db/key/auth.repo.ts';
import { ALLOWANCE_RING, hashToken, looksLikeToken, SET_UP_RING } from '#domain/key/api-key.ts';
import { audienceCovers } from '#domain/oauth/oauth.ts';
import type { Principal } from '#domain/principal.ts';
import { config } from '#shared/config.ts';

/**
 * A bearer token → its key's principal, counting the request against the key's rate limit in the
 * same conditional write (shared/db/key/auth.repo.ts) when `admits` says the request will be
 * served. A token that cannot be a key is refused without a read; an OAuth access token is refused
 * outside the resource it was issued for (RFC 8707), when the caller names the API resource asked for.
 */
export async function authenticateToken(
  token: string,
  admits: (p: Principal) => boolean = () => true,
  resource?: string,
): Promise<AuthResult> {
  if (!looksLikeToken(token)) return { ok: false };
  const auth = await authenticate(hashToken(token), Date.now(), config().rateLimitPerMinute, admits);
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
export async function claimMcpAllowance(token: string, setUp: boolean): Promise<AuthResult> {
  const limit = setUp ? config().mcpSetUpPerMinute : config().rateLimitPerMinute;
  return authenticate(hashToken(token), Date.now(), limit, undefined, setUp ? SET_UP_RING : ALLOWANCE_RING);
}
