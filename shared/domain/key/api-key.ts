import { createHash, randomBytes } from 'node:crypto';
import type { Ability } from './abilities.ts';
import type { Destination } from './destination.ts';

/**
 * An API key in the domain: what it is (`ApiKey`, and `KeyRecord` with its secrets), its token
 * (made, hashed, recognised) and its request allowance (the rate limit's ring on the token item).
 */

export const MCP_MODES = ['full', 'read-only'] as const;
export type McpMode = (typeof MCP_MODES)[number];

export interface ApiKey {
  id: number;
  store_id: string;
  name: string;
  abilities: Ability[];
  status: 'active' | 'revoked';
  /** The webhook destination's URL; null when the key has none or another kind (`destination`). */
  webhook_url: string | null;
  /** Where its events go: a webhook, an SQS queue or an EventBridge bus (./destination.ts); null: nowhere. */
  destination: Destination | null;
  /** The external id its destination's role must name in its trust policy; null for keys made before destinations. */
  aws_external_id: string | null;
  /** The events its webhook receives (default all order events): types, or `type:fields` (shared/domain/webhook/event-subscription.ts). */
  events: string[];
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
  /** `grant`: made by an OAuth approval (docs/oauth.md); its token is an expiring access token. */
  kind?: 'grant';
  /** A grant's OAuth client (its `client_id`: a registered id or a metadata document's URL). */
  client_id?: string;
  token_hash: string;
  /**
   * A FIFO destination's deliveries are ordered from the event after this sequence: the store's
   * last one when the destination was set (shared/app/ordered-delivery.ts); null otherwise.
   */
  ordered_from: number | null;
  webhook_secret: string;
  previous_webhook_secret: string | null;
  previous_webhook_secret_expires_at: string | null;
}

export function publicKey(record: KeyRecord): ApiKey {
  const {
    kind: _k,
    token_hash: _h,
    ordered_from: _o,
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

/**
 * A bearer value that cannot be a token is refused without a database read: a key's token
 * (`sia_`) or an OAuth access token (`sio_`, docs/oauth.md#tokens).
 */
export function looksLikeToken(value: string): boolean {
  return /^si[ao]_[A-Za-z0-9_-]{43}$/.test(value);
}

/** Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return 'whsec_' + randomBytes(32).toString('base64');
}

/**
 * The rolling-minute allowance, kept on the token item as a ring of per-second counts: `rls`, the
 * newest second the ring counts (since 2026-01-01), and one small count per second of the last 61
 * that saw a request (`rc0` … `rcy`, the second's position in the ring). A request counts in the
 * whole second it falls in, as if it came at that second's end: so the ring never admits more
 * than `limit` requests in any 60 s (exactly the 61st is refused), and it may refuse one up to a
 * second before an exact log of request times would, which `Retry-After` accounts for (up to 61).
 * At most 61 counts, whatever the allowance: the token item stays under DynamoDB's 1 KB write
 * unit (one WRU per request) at 1,000 requests a minute as at 60.
 *
 * One conditional UpdateItem admits a request, and parallel requests of one key do not retry
 * against each other: within a second they all add to its count under a condition on that count
 * alone (DynamoDB checks it against the item as it is, in write order), and the counts of earlier
 * seconds cannot change while `rls` stays (only the write that moves it rewrites them). Moving
 * `rls` to a new second is guarded on `rls` and, near the limit, on the old head's count.
 */
export const WINDOW_MS = 60_000;
export const BUCKET_MS = 1_000;
/** Seconds the window spans as the ring counts them: s − 60 … s. */
export const RING_SIZE = WINDOW_MS / BUCKET_MS + 1;
export const RING_EPOCH_MS = Date.UTC(2026, 0, 1);
export const HEAD_ATTRIBUTE = 'rls';
const POSITIONS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.slice(0, RING_SIZE);
const BUCKET_NAME = /^[rs]c[0-9A-Za-y]$/;

/** Where a ring lives on the token item: its head attribute and the prefix of its counts. */
export interface RingAttributes {
  head: string;
  counts: 'rc' | 'sc';
}
/** The key's allowance: HTTP requests and MCP tool calls. */
export const ALLOWANCE_RING: RingAttributes = { head: HEAD_ATTRIBUTE, counts: 'rc' };
/**
 * MCP session set-up's limit of its own (`initialize`, `tools/list`, `ping`, notifications;
 * docs/mcp.md#rate-limit): the same ring under other names (`sls`, `sc0` … `scy`), so set-up never
 * spends the allowance and a client flooding it is still refused.
 */
export const SET_UP_RING: RingAttributes = { head: 'sls', counts: 'sc' };
const isCountOf = (name: string, ring: RingAttributes) => name.startsWith(ring.counts) && BUCKET_NAME.test(name);
/** Slots of the earlier limiter (`rl0` …, one request time each); folded into the ring, then removed. */
const LEGACY_SLOT_NAME = /^rl\d+$/;
/** Legacy slots a write removes at most (an update expression is at most 4 KB). */
export const LEGACY_REMOVALS_PER_WRITE = 100;

const mod = (n: number) => ((n % RING_SIZE) + RING_SIZE) % RING_SIZE;
export const secondOf = (ms: number): number => Math.floor((ms - RING_EPOCH_MS) / BUCKET_MS);
export const bucketAttribute = (second: number, ring: RingAttributes = ALLOWANCE_RING): string =>
  `${ring.counts}${POSITIONS[mod(second)]}`;
/** The token item's attributes that hold the allowance and the set-up limit (carried over when the token rotates). */
export const isRateAttribute = (name: string): boolean =>
  name === ALLOWANCE_RING.head || name === SET_UP_RING.head || BUCKET_NAME.test(name) || LEGACY_SLOT_NAME.test(name);

/**
 * How the earlier limiter stored a slot's time: tenths of a second since 2026-01-01 (rounded up),
 * or before that a millisecond epoch (10^12 and above).
 */
export const decodeLegacySlot = (stored: number): number => (stored >= 1e12 ? stored : RING_EPOCH_MS + stored * 100);

/** The ring as stored: its head, the count of each second it holds, and any earlier slots. */
export interface Ring {
  head: number | undefined;
  counts: Map<number, number>;
  legacy: string[];
}

export function ringOf(item: Record<string, unknown>, ring: RingAttributes = ALLOWANCE_RING): Ring {
  const stored = item[ring.head];
  const head = typeof stored === 'number' ? stored : undefined;
  const counts = new Map<number, number>();
  const legacy: string[] = [];
  for (const [name, value] of Object.entries(item)) {
    if (typeof value !== 'number') continue;
    // The earlier limiter's slots belong to the allowance.
    if (ring === ALLOWANCE_RING && LEGACY_SLOT_NAME.test(name)) {
      legacy.push(name);
      // Before the ring exists, each live slot is a request to count in its second.
      if (head === undefined) {
        const second = secondOf(decodeLegacySlot(value));
        counts.set(second, (counts.get(second) ?? 0) + 1);
      }
    } else if (head !== undefined && isCountOf(name, ring)) {
      counts.set(head - mod(head - POSITIONS.indexOf(name[2]!)), value);
    }
  }
  return { head, counts, legacy };
}

/** The one write that admits a request (shared/db/key/auth.repo.ts turns it into an UpdateItem). */
export interface RateClaim {
  /** The second this request counts in; the head once written. */
  second: number;
  /** The head as read: a join requires it unchanged, a move requires it (or its absence) too. */
  head: number | undefined;
  /** `rls` moves to `second`: the counts to write (this request's included) and the seconds to clear. */
  move?: { counts: [number, number][]; clear: number[] };
  /** The second whose count the write is guarded on (it must stay below `cap`), if any. */
  guard?: { second: number; cap: number };
  /** Earlier slots to remove with this write. */
  removeLegacy: string[];
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window has room again (RateLimit-Reset, and Retry-After when refused; ≥ 1). */
  resetSeconds: number;
  /** The write that takes this request's place in the window, when allowed. */
  claim?: RateClaim;
  /**
   * Refused because the key's own requests kept claiming its count at the same moment
   * (shared/app/authenticate.ts gives up after a few tries), not because the allowance is spent.
   */
  contended?: boolean;
}

/** What a 429 says: the allowance spent, or the key's own requests colliding on its count. */
export function refusalMessage(rate: { limit: number; resetSeconds: number; contended?: boolean }): string {
  return rate.contended
    ? `This key sent more requests at the same moment than its count could take in turn; retry after ${rate.resetSeconds} s (its allowance of ${rate.limit} requests per minute is not spent).`
    : `This key exceeded its allowance of ${rate.limit} requests per minute.`;
}

/** Seconds from `nowMs` until the requests of `second` leave the window (≥ 1). */
const untilFree = (second: number, nowMs: number) =>
  Math.max(1, Math.ceil((RING_EPOCH_MS + (second + RING_SIZE) * BUCKET_MS - nowMs) / 1000));

/** The window at `nowMs`: live counts, their total and the oldest second among them. */
function windowAt(ring: Ring, nowMs: number) {
  const second = Math.max(secondOf(nowMs), ring.head ?? -Infinity, ...ring.counts.keys());
  const live = new Map<number, number>();
  const stale: number[] = [];
  let total = 0;
  let oldest = second;
  for (const [s, n] of ring.counts) {
    if (s <= second - RING_SIZE) stale.push(s);
    else if (n > 0) {
      live.set(s, n);
      total += n;
      oldest = Math.min(oldest, s);
    }
  }
  return { second, live, stale, total, oldest };
}

export function decide(ring: Ring, nowMs: number, limit: number): RateDecision {
  const { second, live, stale, total, oldest } = windowAt(ring, nowMs);
  if (total >= limit) return { allowed: false, limit, remaining: 0, resetSeconds: untilFree(oldest, nowMs) };
  const removeLegacy = ring.legacy.slice(0, LEGACY_REMOVALS_PER_WRITE);
  const othersThan = (s: number) => total - (live.get(s) ?? 0);
  let claim: RateClaim;
  if (ring.head === second) {
    claim = { second, head: second, guard: { second, cap: limit - othersThan(second) }, removeLegacy };
  } else {
    const counts = new Map(live).set(second, (live.get(second) ?? 0) + 1);
    const written = new Set([...counts.keys()].map(mod));
    // Only the old head's count can still grow under this write (requests joining it); others are settled.
    const headLive = ring.head !== undefined && live.has(ring.head);
    claim = {
      second,
      head: ring.head,
      move: {
        // Without a head (earlier slots folded in) every live count is written; with one, only the new second's.
        counts: ring.head === undefined ? [...counts] : [[second, counts.get(second)!]],
        clear: ring.head === undefined ? [] : stale.filter((s) => !written.has(mod(s))),
      },
      ...(headLive ? { guard: { second: ring.head!, cap: limit - othersThan(ring.head!) } } : {}),
      removeLegacy,
    };
  }
  return {
    allowed: true,
    limit,
    remaining: limit - total - 1,
    resetSeconds: untilFree(oldest, nowMs),
    claim,
  };
}

/**
 * The headers' view once this request's count is written: from the item as the write left it, so
 * parallel requests of one key each see the requests committed before them (59, 58, 57, ...), not
 * the state they all read before claiming.
 */
export function afterClaim(
  item: Record<string, unknown>,
  nowMs: number,
  limit: number,
  ring: RingAttributes = ALLOWANCE_RING,
) {
  const { total, oldest } = windowAt(ringOf(item, ring), nowMs);
  return { remaining: Math.max(0, limit - total), resetSeconds: untilFree(oldest, nowMs) };
}
