import { createHash, randomBytes } from 'node:crypto';
import type { EventType } from '../event/event.ts';
import type { Ability } from './abilities.ts';

/**
 * An API key in the domain: what it is (`ApiKey`, and `KeyRecord` with its secrets) and its token
 * (made, hashed, recognised). Its request allowance, the rate limit's ring on the token item, is
 * rate-limit.ts.
 */

export const MCP_MODES = ['full', 'read-only'] as const;
export type McpMode = (typeof MCP_MODES)[number];

export interface ApiKey {
  id: number;
  store_id: string;
  name: string;
  abilities: Ability[];
  status: 'active' | 'revoked';
  webhook_url: string | null;
  /** The events its webhook receives (default all order events). */
  events: EventType[];
  /** Whether its webhook skips the events this key caused itself (`--exclude-own`). */
  exclude_own: boolean;
  /** `read-only`: the MCP server offers this key only its read tools, whatever its abilities (docs/mcp.md#read-only-keys). */
  mcp: McpMode;
  /** Write requests per hour (docs/api.md#write-budget); null: no budget. */
  writes_per_hour: number | null;
  /** Order status changes per hour; null: no budget. */
  status_changes_per_hour: number | null;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** The key record with its secrets, for the webhook path and the admin handler only. */
export interface KeyRecord extends ApiKey {
  token_hash: string;
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
}

export function publicKey(record: KeyRecord): ApiKey {
  const {
    token_hash: _h,
    webhook_secret: _s,
    previous_webhook_secret: _p,
    previous_webhook_secret_expires_at: _e,
    ...rest
  } = record;
  return rest;
}

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
