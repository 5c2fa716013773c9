/**
 * The rolling-minute allowance, kept on the token item as a ring of per-second counts in five
 * attributes, whatever the traffic (docs/api.md#rate-limit-60-per-key-per-rolling-minute):
 *
 * - `rh`, the head: the newest second the ring counts (seconds since 2026-01-01), and `rn`, how
 *   many requests that second admitted. Requests of the head second join it: they add to `rn`.
 * - `rqs` and `rq`: the second the head held before it last moved, and its final count. The write
 *   that moves the head copies them from `rh` and `rn` as it commits, so requests that joined the
 *   old head while the move was on its way all stay counted.
 * - `rp`: the counts of the older seconds still in the window, packed into one string by the
 *   write that moved the head (`d:c,…` in base 36: `c` requests `d` seconds before `rh`).
 *
 * A request counts in the whole second it falls in, as if it came at that second's end: so the
 * ring never admits more than `limit` requests in any 60 s (exactly the 61st is refused), and it
 * may refuse one up to a second before an exact log of request times would, which `Retry-After`
 * accounts for (up to 61). At most 61 counts, whatever the allowance: the token item stays under
 * DynamoDB's 1 KB write unit (one WRU per request) at 1,000 requests a minute as at 60.
 *
 * One conditional UpdateItem admits a request, and parallel requests of one key do not retry
 * against each other: within a second they all add to `rn` under a condition on that count
 * alone (DynamoDB checks it against the item as it is, in write order). Only the write that moves
 * `rh` writes `rqs`, `rq` and `rp`, on the condition that `rh` is what it read, so a writer that
 * read `rh` knows them exactly. Moving `rh` to a new second is guarded on `rh` and, near the
 * limit, on the old head's count.
 *
 * Five attributes rather than one per second: every request reads the whole item back (the
 * container's cache of it), and both the SDK and the store spend CPU per attribute (bench
 * throughput section, "The token item's size").
 */
export const WINDOW_MS = 60_000;
export const BUCKET_MS = 1_000;
/** Seconds the window spans as the ring counts them: s − 60 … s. */
export const RING_SIZE = WINDOW_MS / BUCKET_MS + 1;
export const RING_EPOCH_MS = Date.UTC(2026, 0, 1);
export const HEAD_ATTRIBUTE = 'rh';
export const HEAD_COUNT_ATTRIBUTE = 'rn';
export const PREVIOUS_ATTRIBUTE = 'rqs';
export const PREVIOUS_COUNT_ATTRIBUTE = 'rq';
export const PACKED_ATTRIBUTE = 'rp';
const RING_ATTRIBUTES = new Set([
  HEAD_ATTRIBUTE,
  HEAD_COUNT_ATTRIBUTE,
  PREVIOUS_ATTRIBUTE,
  PREVIOUS_COUNT_ATTRIBUTE,
  PACKED_ATTRIBUTE,
]);

/**
 * The ring's form before this one: `rls`, its head, and one attribute per second (`rc0` … `rcy`,
 * by the second's position in a ring of 61). Read and converted by the first write, which removes it.
 */
export const BUCKET_HEAD_ATTRIBUTE = 'rls';
const POSITIONS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.slice(0, RING_SIZE);
const BUCKET_NAME = /^rc[0-9A-Za-y]$/;
/** Slots of the limiter before that (`rl0` …, one request time each); folded into the ring, then removed. */
const LEGACY_SLOT_NAME = /^rl\d+$/;
/** Attributes of the earlier forms a write removes at most (an update expression is at most 4 KB). */
export const LEGACY_REMOVALS_PER_WRITE = 100;

const mod = (n: number) => ((n % RING_SIZE) + RING_SIZE) % RING_SIZE;
export const secondOf = (ms: number): number => Math.floor((ms - RING_EPOCH_MS) / BUCKET_MS);
/** The earlier form's attribute for `second`'s count. */
export const bucketAttribute = (second: number): string => `rc${POSITIONS[mod(second)]}`;
/** The token item's attributes that hold the allowance, in any form (carried over when the token rotates). */
export const isRateAttribute = (name: string): boolean =>
  RING_ATTRIBUTES.has(name) || name === BUCKET_HEAD_ATTRIBUTE || BUCKET_NAME.test(name) || LEGACY_SLOT_NAME.test(name);

/**
 * How the earlier limiter stored a slot's time: tenths of a second since 2026-01-01 (rounded up),
 * or before that a millisecond epoch (10^12 and above).
 */
export const decodeLegacySlot = (stored: number): number => (stored >= 1e12 ? stored : RING_EPOCH_MS + stored * 100);

/** `rp`: the counts of `seconds` before `head`, as `d:c` pairs in base 36, nearest first. */
export function packCounts(head: number, counts: Iterable<[number, number]>): string {
  return [...counts]
    .filter(([second, count]) => second < head && count > 0)
    .sort(([a], [b]) => b - a)
    .map(([second, count]) => `${(head - second).toString(36)}:${count.toString(36)}`)
    .join(',');
}

/** The counts `rp` holds, by second; anything unreadable in it is skipped. */
export function unpackCounts(head: number, packed: unknown): Array<[number, number]> {
  if (typeof packed !== 'string' || packed === '') return [];
  return packed.split(',').flatMap((pair) => {
    const [d, c] = pair.split(':').map((n) => Number.parseInt(n ?? '', 36));
    return d !== undefined && c !== undefined && d > 0 && c > 0 ? [[head - d, c] as [number, number]] : [];
  });
}

/** The ring as stored: its head, the count of each second it holds, and the earlier forms' attributes. */
export interface Ring {
  /** `rh`; undefined until the item has a ring of this form. */
  head: number | undefined;
  counts: Map<number, number>;
  /** Attributes of the earlier forms, to remove (earliest-form slots last). */
  legacy: string[];
  /** Without `rh`: the earlier form's head (`rls`), whose count may still grow under a writer of that form. */
  bucketHead?: number;
}

const numberAt = (item: Record<string, unknown>, name: string) =>
  typeof item[name] === 'number' ? (item[name] as number) : undefined;

export function ringOf(item: Record<string, unknown>): Ring {
  const head = numberAt(item, HEAD_ATTRIBUTE);
  const counts = new Map<number, number>();
  const add = (second: number, count: number | undefined) => {
    if (count) counts.set(second, (counts.get(second) ?? 0) + count);
  };
  const earlier = Object.keys(item).filter((name) => name === BUCKET_HEAD_ATTRIBUTE || BUCKET_NAME.test(name));
  const slots = Object.keys(item).filter((name) => LEGACY_SLOT_NAME.test(name));
  const legacy = [...earlier, ...slots];
  if (head !== undefined) {
    // Once the ring has this form, what an earlier form left is only removed, never counted again.
    add(head, numberAt(item, HEAD_COUNT_ATTRIBUTE));
    const previous = numberAt(item, PREVIOUS_ATTRIBUTE);
    if (previous !== undefined) add(previous, numberAt(item, PREVIOUS_COUNT_ATTRIBUTE));
    for (const [second, count] of unpackCounts(head, item[PACKED_ATTRIBUTE])) add(second, count);
    return { head, counts, legacy };
  }
  const bucketHead = numberAt(item, BUCKET_HEAD_ATTRIBUTE);
  if (bucketHead !== undefined) {
    for (const name of earlier)
      if (name !== BUCKET_HEAD_ATTRIBUTE)
        add(bucketHead - mod(bucketHead - POSITIONS.indexOf(name[2]!)), numberAt(item, name));
    return { head, counts, legacy, bucketHead };
  }
  // Before any ring, each live slot is a request to count in its second.
  for (const name of slots) {
    const stored = numberAt(item, name);
    if (stored !== undefined) add(secondOf(decodeLegacySlot(stored)), 1);
  }
  return { head, counts, legacy };
}

/** The one write that admits a request (shared/db/key-auth.repo.ts turns it into an UpdateItem). */
export interface RateClaim {
  /** The second this request counts in; the head once written. */
  second: number;
  /** `rh` as read: the write requires it unchanged (undefined: requires it absent). */
  head: number | undefined;
  /** Without `rh`: `rls` as read, which the write requires unchanged (null: requires it absent). */
  bucketHead?: number | null;
  /**
   * `rh` moves to `second`. The old head's count is copied by the write from the attribute that
   * holds it (`from`): into `rq`, with `rqs` = its second, or, when an earlier form's head is this
   * very second, into `rn` with this request added. Otherwise `rn` = `count` (this request, and any
   * earlier-form slots of this second). `packed` is the new `rp`.
   */
  move?: { from?: { second: number; attribute: string }; count: number; packed: string };
  /** The count attribute the write is guarded on (it must stay below `cap`), if any. */
  guard?: { attribute: string; cap: number };
  /** Attributes of the earlier forms to remove with this write. */
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
}

/** Seconds from `nowMs` until the requests of `second` leave the window (≥ 1). */
const untilFree = (second: number, nowMs: number) =>
  Math.max(1, Math.ceil((RING_EPOCH_MS + (second + RING_SIZE) * BUCKET_MS - nowMs) / 1000));

/** The window at `nowMs`: live counts, their total and the oldest second among them. */
function windowAt(ring: Ring, nowMs: number) {
  const second = Math.max(secondOf(nowMs), ring.head ?? -Infinity, ring.bucketHead ?? -Infinity, ...ring.counts.keys());
  const live = new Map<number, number>();
  let total = 0;
  let oldest = second;
  for (const [s, n] of ring.counts) {
    if (s > second - RING_SIZE && n > 0) {
      live.set(s, n);
      total += n;
      oldest = Math.min(oldest, s);
    }
  }
  return { second, live, total, oldest };
}

export function decide(ring: Ring, nowMs: number, limit: number): RateDecision {
  const { second, live, total, oldest } = windowAt(ring, nowMs);
  if (total >= limit) return { allowed: false, limit, remaining: 0, resetSeconds: untilFree(oldest, nowMs) };
  const removeLegacy = ring.legacy.slice(0, LEGACY_REMOVALS_PER_WRITE);
  const othersThan = (s: number) => total - (live.get(s) ?? 0);
  let claim: RateClaim;
  if (ring.head === second) {
    claim = {
      second,
      head: second,
      guard: { attribute: HEAD_COUNT_ATTRIBUTE, cap: limit - othersThan(second) },
      removeLegacy,
    };
  } else {
    // The old head's count may still grow under requests joining it, so the write copies it; every
    // other count in the window is settled, and is packed from what was read.
    const oldHead = ring.head ?? ring.bucketHead;
    const from =
      oldHead === undefined
        ? undefined
        : {
            second: oldHead,
            attribute: ring.head !== undefined ? HEAD_COUNT_ATTRIBUTE : bucketAttribute(oldHead),
          };
    const settled = [...live].filter(([s]) => s !== second && s !== oldHead);
    claim = {
      second,
      head: ring.head,
      ...(ring.head === undefined ? { bucketHead: ring.bucketHead ?? null } : {}),
      move: {
        ...(from ? { from } : {}),
        count: from?.second === second ? 1 : (live.get(second) ?? 0) + 1,
        packed: packCounts(second, settled),
      },
      ...(oldHead !== undefined && live.has(oldHead)
        ? { guard: { attribute: from!.attribute, cap: limit - othersThan(oldHead) } }
        : {}),
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
export function afterClaim(item: Record<string, unknown>, nowMs: number, limit: number) {
  const { total, oldest } = windowAt(ringOf(item), nowMs);
  return { remaining: Math.max(0, limit - total), resetSeconds: untilFree(oldest, nowMs) };
}
