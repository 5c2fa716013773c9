import { authenticate, type AuthResult } from '#db/key/auth.repo.ts';
import { hashToken, looksLikeToken } from '#domain/key/api-key.ts';
import type { Principal } from '#domain/principal.ts';
import { config } from '#shared/config.ts';

/**
 * A bearer token → its key's principal, counting the request against the key's rate limit in the
 * same conditional write (shared/db/key/auth.repo.ts) when `admits` says the request will be
 * served. A token that cannot be a key is refused without a read.
 */
export async function authenticateToken(
  token: string,
  admits: (p: Principal) => boolean = () => true,
): Promise<AuthResult> {
  if (!looksLikeToken(token)) return { ok: false };
  return authenticate(hashToken(token), Date.now(), config().rateLimitPerMinute, admits);
}
