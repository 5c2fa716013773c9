import { describe, expect, it } from 'vitest';
import { itemSize } from '../../bench/billing-units.ts';
import { ABILITIES } from '#domain/key/abilities.ts';
import {
  afterClaim,
  ALLOWANCE_RING,
  bucketAttribute,
  decide,
  HEAD_ATTRIBUTE,
  isRateAttribute,
  LEGACY_REMOVALS_PER_WRITE,
  RING_EPOCH_MS,
  RING_SIZE,
  ringOf,
  secondOf,
  SET_UP_RING,
  type RateClaim,
} from '#domain/key/api-key.ts';

/** 2026-11-25 12:00:00.250 UTC: a quarter into a second. */
const now = Date.UTC(2026, 10, 25, 12, 0, 0, 250);
const s = secondOf(now);

/**
 * What a claim leaves on the item, as shared/db/key/auth.repo.ts writes it when its condition
 * holds (test/integration/rate-limit.test.ts runs the real writes against DynamoDB).
 */
function apply(item: Record<string, unknown>, claim: RateClaim): Record<string, unknown> {
  const next = { ...item };
  for (const name of claim.removeLegacy) delete next[name];
  if (claim.move) {
    for (const second of claim.move.clear) delete next[bucketAttribute(second)];
    for (const [second, count] of claim.move.counts) next[bucketAttribute(second)] = count;
    next[HEAD_ATTRIBUTE] = claim.second;
  } else {
    const bucket = bucketAttribute(claim.second);
    next[bucket] = ((next[bucket] as number | undefined) ?? 0) + 1;
  }
  return next;
}

/** Admits requests at the given times one after another; returns how many got in. */
function run(times: number[], limit: number, item: Record<string, unknown> = {}) {
  let admitted = 0;
  for (const t of times) {
    const d = decide(ringOf(item), t, limit);
    if (d.claim) {
      item = apply(item, d.claim);
      admitted++;
    }
  }
  return { admitted, item };
}

describe('the rate-limit ring', () => {
  it('admits into an empty ring: the head moves to this second with a count of one', () => {
    const d = decide(ringOf({}), now, 3);
    expect(d).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    expect(d.claim).toEqual({ second: s, head: undefined, move: { counts: [[s, 1]], clear: [] }, removeLegacy: [] });
    // Its request leaves the window at the end of the second 60 s on (rounded up: 60.75 s → 61).
    expect(d.resetSeconds).toBe(61);
  });

  it("keeps MCP set-up's ring apart from the allowance's on one item, both carried over on rotation", () => {
    const item = {
      [HEAD_ATTRIBUTE]: s,
      [bucketAttribute(s)]: 3,
      [SET_UP_RING.head]: s - 1,
      [bucketAttribute(s - 1, SET_UP_RING)]: 7,
      rl0: 1,
    };
    expect(ringOf(item, ALLOWANCE_RING).counts).toEqual(new Map([[s, 3]]));
    expect(ringOf(item, SET_UP_RING)).toEqual({ head: s - 1, counts: new Map([[s - 1, 7]]), legacy: [] });
    expect(decide(ringOf(item, SET_UP_RING), now, 8)).toMatchObject({ allowed: true, remaining: 0 });
    expect(decide(ringOf(item, SET_UP_RING), now, 7)).toMatchObject({ allowed: false });
    expect(bucketAttribute(s, SET_UP_RING)).toMatch(/^sc.$/);
    expect(Object.keys(item).every(isRateAttribute)).toBe(true);
  });

  it('joins the head second under a cap on its count: what the rest of the window leaves', () => {
    const item = { [HEAD_ATTRIBUTE]: s, [bucketAttribute(s)]: 2, [bucketAttribute(s - 30)]: 5 };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim).toEqual({ second: s, head: s, guard: { second: s, cap: 5 }, removeLegacy: [] });
    expect(d.remaining).toBe(2);
    expect(d.resetSeconds).toBe(31);
  });

  it('moves the head to a new second, clears the seconds that left the window and guards the old head near the limit', () => {
    const item = {
      [HEAD_ATTRIBUTE]: s - 3,
      [bucketAttribute(s - 3)]: 4,
      [bucketAttribute(s - 60)]: 3,
      // Out of the window now: s − 61 shares its position with s (overwritten), s − 62 is cleared.
      [bucketAttribute(s - 61)]: 2,
      [bucketAttribute(s - 62)]: 7,
    };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim).toEqual({
      second: s,
      head: s - 3,
      move: { counts: [[s, 1]], clear: [s - 62] },
      guard: { second: s - 3, cap: 7 },
      removeLegacy: [],
    });
    expect(apply(item, d.claim!)).toEqual({
      [HEAD_ATTRIBUTE]: s,
      [bucketAttribute(s)]: 1,
      [bucketAttribute(s - 3)]: 4,
      [bucketAttribute(s - 60)]: 3,
    });
    expect(d.remaining).toBe(2);
    // s − 60 is the oldest second still counted: its requests leave 1 s from the next second.
    expect(d.resetSeconds).toBe(1);
  });

  it('never clears the bucket it writes: a head a whole ring behind shares its position with this second', () => {
    const item = { [HEAD_ATTRIBUTE]: s - RING_SIZE, [bucketAttribute(s - RING_SIZE)]: 9 };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim?.move).toEqual({ counts: [[s, 1]], clear: [] });
    expect(d.claim?.guard).toBeUndefined();
    expect(apply(item, d.claim!)).toEqual({ [HEAD_ATTRIBUTE]: s, [bucketAttribute(s)]: 1 });
  });

  it('refuses at the limit, with Retry-After until the oldest counted second leaves', () => {
    const item = { [HEAD_ATTRIBUTE]: s, [bucketAttribute(s)]: 1, [bucketAttribute(s - 50)]: 2 };
    const d = decide(ringOf(item), now, 3);
    expect(d).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 11 });
  });

  it('counts a request from a clock behind the head in the head second', () => {
    const item = { [HEAD_ATTRIBUTE]: s + 1, [bucketAttribute(s + 1)]: 1 };
    expect(decide(ringOf(item), now, 5).claim).toMatchObject({ second: s + 1, head: s + 1 });
  });

  it('admits exactly `limit` requests in any 60 s, and refuses one at most a second before an exact log would', () => {
    // Requests every 100 ms over 3 minutes against an allowance of 60.
    const times = Array.from({ length: 1800 }, (_, i) => now + i * 100);
    const admittedAt: number[] = [];
    let item: Record<string, unknown> = {};
    for (const t of times) {
      const d = decide(ringOf(item), t, 60);
      if (d.claim) {
        item = apply(item, d.claim);
        admittedAt.push(t);
      } else {
        // Refused: an exact log holds 60 requests within the last 61 s.
        expect(admittedAt.filter((a) => a > t - 61_000).length).toBeGreaterThanOrEqual(60);
      }
      expect(admittedAt.filter((a) => a > t - 60_000).length).toBeLessThanOrEqual(60);
    }
    expect(admittedAt.length).toBeGreaterThanOrEqual(180 - 3);
  });

  it('after a claim, reports what the written item leaves: the requests committed before count too', () => {
    const item = { [HEAD_ATTRIBUTE]: s, [bucketAttribute(s)]: 3, [bucketAttribute(s - 59)]: 1 };
    expect(afterClaim(item, now, 5)).toEqual({ remaining: 1, resetSeconds: 2 });
    expect(afterClaim(item, now, 4)).toEqual({ remaining: 0, resetSeconds: 2 });
  });

  it('reads each position as the latest second at or before the head that maps to it', () => {
    const item = {
      [HEAD_ATTRIBUTE]: s,
      [bucketAttribute(s)]: 1,
      [bucketAttribute(s - 1)]: 2,
      [bucketAttribute(s - 60)]: 3,
    };
    expect([...ringOf(item).counts].sort(([a], [b]) => a - b)).toEqual([
      [s - 60, 3],
      [s - 1, 2],
      [s, 1],
    ]);
  });
});

describe('the earlier slots (one request time each)', () => {
  it('folds live slots into the ring, skips expired ones, and removes at most a bounded number per write', () => {
    const legacy: Record<string, unknown> = {};
    // Tenths of a second since 2026 (the compact form) and a millisecond epoch (the first form).
    legacy.rl0 = Math.ceil((now - 2_000 - RING_EPOCH_MS) / 100);
    legacy.rl1 = now - 1_000;
    legacy.rl2 = now - 70_000;
    for (let i = 3; i < 150; i++) legacy[`rl${i}`] = now - 120_000;
    const d = decide(ringOf(legacy), now, 3);
    expect(d.remaining).toBe(0);
    expect(d.claim?.head).toBeUndefined();
    expect(new Map(d.claim?.move?.counts)).toEqual(
      new Map([
        [s - 2, 1],
        [s - 1, 1],
        [s, 1],
      ]),
    );
    expect(d.claim?.removeLegacy).toHaveLength(LEGACY_REMOVALS_PER_WRITE);
    const after = apply(legacy, d.claim!);
    // Once the ring has a head, the slots left are only removed, never counted again.
    expect(decide(ringOf(after), now, 3).allowed).toBe(false);
    expect(decide(ringOf(after), now, 4).claim?.removeLegacy).toHaveLength(50);
  });

  it('carries every attribute of the allowance over a rotation, and nothing else', () => {
    const names = [HEAD_ATTRIBUTE, 'rc0', 'rcy', 'rl0', 'rl59', 'status', 'uses', 'rcz', 'rlx'];
    expect(names.filter(isRateAttribute)).toEqual([HEAD_ATTRIBUTE, 'rc0', 'rcy', 'rl0', 'rl59']);
    expect(new Set(Array.from({ length: RING_SIZE }, (_, i) => bucketAttribute(s + i))).size).toBe(RING_SIZE);
  });
});

describe('the token item size', () => {
  // Its largest form without the ring: every ability, the longest store id, every setting.
  const base = (): Record<string, unknown> => ({
    pk: `TOKEN#${'a'.repeat(64)}`,
    sk: 'TOKEN',
    type: 'token',
    key_id: 1_000_000,
    store_id: `s-${'x'.repeat(62)}`,
    abilities: [...ABILITIES],
    mcp: 'read-only',
    writes_per_hour: 1_000_000,
    status_changes_per_hour: 1_000_000,
    currency_code: 'EUR',
    status: 'active',
    last_used_at: new Date(now).toISOString(),
    uses: 1_000_000_000,
  });

  for (const limit of [1, 60, 1000]) {
    it(`stays under 1 KB (one write unit a request) at an allowance of ${limit}, spent over the window`, () => {
      // Requests spread so that every second of the window holds some, then the allowance spent.
      const times = Array.from(
        { length: 2 * limit + 2 * RING_SIZE },
        (_, i) => now + Math.floor((i * 61_000) / (2 * limit + 2 * RING_SIZE)),
      );
      const { item } = run(times, limit, base());
      expect(itemSize(item)).toBeLessThan(1024);
    });
  }

  it('stays under 1 KB when each of the 61 seconds holds the largest count', () => {
    const item = base();
    item[HEAD_ATTRIBUTE] = s;
    for (let i = 0; i < RING_SIZE; i++) item[bucketAttribute(s - i)] = 1000;
    expect(itemSize(item)).toBeLessThan(1024);
  });
});
