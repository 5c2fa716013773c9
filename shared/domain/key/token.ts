import { createHash, randomBytes } from 'node:crypto';

/**
 * API tokens: 256 bits from the OS CSPRNG, with a recognisable prefix so that secret scanners
 * and humans can tell what leaked. Only the SHA-256 of a token is stored; a fast hash is right
 * here because the token itself has full entropy (no dictionary to brute-force).
 */
export const TOKEN_PREFIX = 'sia_';

export function generateToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A bearer value that cannot be a token is refused without a database read. */
export function looksLikeToken(value: string): boolean {
  return /^sia_[A-Za-z0-9_-]{43}$/.test(value);
}

/** Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}
