import { createHash, randomBytes } from 'node:crypto';
import type { EventType } from '../event/event.ts';
import type { Ability } from './abilities.ts';

/**
 * An API key in the domain: what it is (`ApiKey`, and `KeyRecord` with its secrets), its token
 * (made, hashed, recognised) and its request allowance (the rate limit's slots on the token item).
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

/**
 * Exact sliding-window limit kept as `limit` slots, each holding the time of one accepted request.
 * A request is admitted by claiming a slot whose time is older than the window (a conditional
 * write on that one slot), so at most `limit` requests fall within any 60 s, and the 61st is
 * refused exactly. Parallel requests of one key claim different free slots instead of fighting
 * over one counter, so a burst needs no retry rounds. Refused requests claim nothing.
 */
export const WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  /** The slot to claim when allowed. */
  slot: number | undefined;
  limit: number;
  remaining: number;
  /** Seconds until the window has room again (RateLimit-Reset, and Retry-After when refused; ≥ 1). */
  resetSeconds: number;
}

export const slotAttribute = (slot: number) => `rl${slot}`;

/**
 * How a slot time is stored: tenths of a second since 2026-01-01, rounded up, so a slot is 6
 * bytes instead of a millisecond epoch's 8 and the token item stays under DynamoDB's 1 KB write
 * unit at the default allowance (60 slots: one WRU per request, not two). Rounding up only keeps a
 * slot taken up to 100 ms longer: never a request more in any 60 s. A value of 10^12 or more is a
 * millisecond epoch, as slots were stored before; it is read as such and freed on its time.
 */
export const SLOT_EPOCH_MS = Date.UTC(2026, 0, 1);
export const SLOT_UNIT_MS = 100;
/** Stored values at or above this are millisecond epochs (written before the compact encoding). */
export const LEGACY_SLOT_MIN = 1e12;

export const encodeSlot = (ms: number): number => Math.ceil((ms - SLOT_EPOCH_MS) / SLOT_UNIT_MS);
export const decodeSlot = (stored: number): number =>
  stored >= LEGACY_SLOT_MIN ? stored : SLOT_EPOCH_MS + stored * SLOT_UNIT_MS;
/** The largest stored value of a slot that is free at `nowMs` (decoded time ≤ nowMs − 60 s). */
export const freeSlotBound = (nowMs: number): number => Math.floor((nowMs - WINDOW_MS - SLOT_EPOCH_MS) / SLOT_UNIT_MS);

/** The slot times stored on an item (`rl0`, `rl1`, ...), indexed by slot, in milliseconds. */
export function slotsOf(item: Record<string, unknown>, limit: number): (number | undefined)[] {
  return Array.from({ length: limit }, (_, i) => {
    const v = item[slotAttribute(i)];
    return typeof v === 'number' ? decodeSlot(v) : undefined;
  });
}

export function decide(
  slots: readonly (number | undefined)[],
  now: number,
  limit: number,
  random: () => number = Math.random,
): RateDecision {
  const cutoff = now - WINDOW_MS;
  const live: number[] = [];
  const free: number[] = [];
  for (let i = 0; i < limit; i++) {
    const t = slots[i];
    if (t !== undefined && t > cutoff) live.push(t);
    else free.push(i);
  }
  // A slot stored rounded up (up to 100 ms ahead of now) still reads as at most one window away.
  const oldest = Math.min(now, live.length ? Math.min(...live) : now);
  const resetSeconds = Math.max(1, Math.ceil((oldest + WINDOW_MS - now) / 1000));
  if (free.length === 0) return { allowed: false, slot: undefined, limit, remaining: 0, resetSeconds };
  return {
    allowed: true,
    slot: free[Math.floor(random() * free.length)],
    limit,
    remaining: free.length - 1,
    resetSeconds,
  };
}

/**
 * The headers' view once this request's slot is written: from the item as the write left it, so
 * parallel requests of one key each see the requests committed before them (59, 58, 57, ...), not
 * the state they all read before claiming.
 */
export function afterClaim(
  slotsNow: readonly (number | undefined)[],
  now: number,
  limit: number,
): Pick<RateDecision, 'remaining' | 'resetSeconds'> {
  const standing = decide(slotsNow, now, limit, () => 0);
  return { remaining: standing.allowed ? standing.remaining + 1 : 0, resetSeconds: standing.resetSeconds };
}
