import { describe, expect, it } from 'vitest';
import { itemSize } from '../../bench/billing-units.ts';
import { ABILITIES } from '#domain/key/abilities.ts';
import {
  afterClaim,
  BUCKET_HEAD_ATTRIBUTE,
  bucketAttribute,
  decide,
  HEAD_ATTRIBUTE,
  HEAD_COUNT_ATTRIBUTE,
  isRateAttribute,
  LEGACY_REMOVALS_PER_WRITE,
  PACKED_ATTRIBUTE,
  packCounts,
  PREVIOUS_ATTRIBUTE,
  PREVIOUS_COUNT_ATTRIBUTE,
  RING_EPOCH_MS,
  RING_SIZE,
  ringOf,
  secondOf,
  unpackCounts,
  type RateClaim,
} from '#domain/key/rate-limit.ts';

/** 2026-11-25 12:00:00.250 UTC: a quarter into a second. */
const now = Date.UTC(2026, 10, 25, 12, 0, 0, 250);
const s = secondOf(now);
const [RH, RN, RQS, RQ, RP] = [
  HEAD_ATTRIBUTE,
  HEAD_COUNT_ATTRIBUTE,
  PREVIOUS_ATTRIBUTE,
  PREVIOUS_COUNT_ATTRIBUTE,
  PACKED_ATTRIBUTE,
];

/**
 * What a claim leaves on the item, as shared/db/key-auth.repo.ts writes it when its condition
 * holds: operands read the item as it was (test/integration/rate-limit.test.ts runs the real
 * writes against DynamoDB).
 */
function apply(item: Record<string, unknown>, claim: RateClaim): Record<string, unknown> {
  const next = { ...item };
  for (const name of claim.removeLegacy) delete next[name];
  if (claim.move) {
    const { from, count, packed } = claim.move;
    const copied = from ? ((item[from.attribute] as number | undefined) ?? 0) : 0;
    next[RH] = claim.second;
    if (from?.second === claim.second) next[RN] = copied + 1;
    else {
      next[RN] = count;
      if (from) Object.assign(next, { [RQS]: from.second, [RQ]: copied });
      else for (const name of [RQS, RQ]) delete next[name];
    }
    if (packed) next[RP] = packed;
    else delete next[RP];
  } else next[RN] = ((item[RN] as number | undefined) ?? 0) + 1;
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

const countsOf = (item: Record<string, unknown>) => [...ringOf(item).counts].sort(([a], [b]) => a - b);

describe('the rate-limit ring', () => {
  it('admits into an empty ring: the head moves to this second with a count of one', () => {
    const d = decide(ringOf({}), now, 3);
    expect(d).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    expect(d.claim).toEqual({
      second: s,
      head: undefined,
      bucketHead: null,
      move: { count: 1, packed: '' },
      removeLegacy: [],
    });
    // Its request leaves the window at the end of the second 60 s on (rounded up: 60.75 s → 61).
    expect(d.resetSeconds).toBe(61);
    expect(apply({}, d.claim!)).toEqual({ [RH]: s, [RN]: 1 });
  });

  it('joins the head second under a cap on its count: what the rest of the window leaves', () => {
    const item = { [RH]: s, [RN]: 2, [RQS]: s - 30, [RQ]: 5 };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim).toEqual({ second: s, head: s, guard: { attribute: RN, cap: 5 }, removeLegacy: [] });
    expect(d.remaining).toBe(2);
    expect(d.resetSeconds).toBe(31);
    expect(apply(item, d.claim!)).toEqual({ ...item, [RN]: 3 });
  });

  it('moves the head to a new second: the old head copied by the write, the settled seconds packed, those out of the window dropped', () => {
    const item = {
      [RH]: s - 3,
      [RN]: 4,
      [RQS]: s - 10,
      [RQ]: 1,
      // s − 61 and s − 62 are out of the window at s.
      [RP]: packCounts(s - 3, [
        [s - 60, 3],
        [s - 61, 2],
        [s - 62, 7],
      ]),
    };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim).toEqual({
      second: s,
      head: s - 3,
      move: { from: { second: s - 3, attribute: RN }, count: 1, packed: 'a:1,1o:3' },
      guard: { attribute: RN, cap: 6 },
      removeLegacy: [],
    });
    expect(apply(item, d.claim!)).toEqual({ [RH]: s, [RN]: 1, [RQS]: s - 3, [RQ]: 4, [RP]: 'a:1,1o:3' });
    expect(countsOf(apply(item, d.claim!))).toEqual([
      [s - 60, 3],
      [s - 10, 1],
      [s - 3, 4],
      [s, 1],
    ]);
    expect(d.remaining).toBe(1);
    // s − 60 is the oldest second still counted: its requests leave 1 s from the next second.
    expect(d.resetSeconds).toBe(1);
  });

  it("keeps the requests that joined the old head while a move was on its way: the write copies the head's count as it commits", () => {
    const item = { [RH]: s - 1, [RN]: 3 };
    const move = decide(ringOf(item), now, 10).claim!;
    // Two requests of another container join s − 1 before the move lands (its condition still holds).
    const joined = apply(apply(item, { second: s - 1, head: s - 1, removeLegacy: [] }), {
      second: s - 1,
      head: s - 1,
      removeLegacy: [],
    });
    expect(joined[RN]).toBe(5);
    // The move's guard is checked against 5, below its cap, and copies 5, not the 3 it read.
    expect(move.guard).toEqual({ attribute: RN, cap: 10 });
    expect(apply(joined, move)).toEqual({ [RH]: s, [RN]: 1, [RQS]: s - 1, [RQ]: 5 });
  });

  it('moves on from a head a whole ring behind without a guard: its copied count is out of the window', () => {
    const item = { [RH]: s - RING_SIZE, [RN]: 9 };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim?.guard).toBeUndefined();
    const after = apply(item, d.claim!);
    expect(after).toEqual({ [RH]: s, [RN]: 1, [RQS]: s - RING_SIZE, [RQ]: 9 });
    expect(decide(ringOf(after), now, 10).remaining).toBe(8);
  });

  it('refuses at the limit, with Retry-After until the oldest counted second leaves', () => {
    const item = { [RH]: s, [RN]: 1, [RP]: packCounts(s, [[s - 50, 2]]) };
    const d = decide(ringOf(item), now, 3);
    expect(d).toEqual({ allowed: false, limit: 3, remaining: 0, resetSeconds: 11 });
  });

  it('counts a request from a clock behind the head in the head second', () => {
    const item = { [RH]: s + 1, [RN]: 1 };
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
      // Five attributes at most, whatever the traffic.
      expect(Object.keys(item).filter(isRateAttribute).length).toBeLessThanOrEqual(5);
    }
    expect(admittedAt.length).toBeGreaterThanOrEqual(180 - 3);
  });

  it('after a claim, reports what the written item leaves: the requests committed before count too', () => {
    const item = { [RH]: s, [RN]: 3, [RP]: packCounts(s, [[s - 59, 1]]) };
    expect(afterClaim(item, now, 5)).toEqual({ remaining: 1, resetSeconds: 2 });
    expect(afterClaim(item, now, 4)).toEqual({ remaining: 0, resetSeconds: 2 });
  });

  it('packs counts as base-36 pairs, nearest second first, and reads back only what it can parse', () => {
    const counts: Array<[number, number]> = [
      [s - 60, 1000],
      [s - 1, 2],
      [s - 36, 35],
      [s, 9],
      [s - 5, 0],
    ];
    // This second and empty counts are not packed.
    expect(packCounts(s, counts)).toBe('1:2,10:z,1o:rs');
    expect(unpackCounts(s, '1:2,10:z,1o:rs')).toEqual([
      [s - 1, 2],
      [s - 36, 35],
      [s - 60, 1000],
    ]);
    expect(unpackCounts(s, '1:2,x,:3,0:4,5:0,2:-1,7')).toEqual([[s - 1, 2]]);
    expect(unpackCounts(s, 42)).toEqual([]);
  });
});

describe('the earlier forms of the allowance', () => {
  it('converts the per-second form: the old head copied by the write, the other seconds packed, every earlier attribute removed', () => {
    const item = {
      [BUCKET_HEAD_ATTRIBUTE]: s - 3,
      [bucketAttribute(s - 3)]: 4,
      [bucketAttribute(s - 10)]: 1,
      [bucketAttribute(s - 62)]: 7,
      status: 'active',
    };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim).toEqual({
      second: s,
      head: undefined,
      bucketHead: s - 3,
      move: { from: { second: s - 3, attribute: bucketAttribute(s - 3) }, count: 1, packed: 'a:1' },
      guard: { attribute: bucketAttribute(s - 3), cap: 9 },
      removeLegacy: [BUCKET_HEAD_ATTRIBUTE, bucketAttribute(s - 3), bucketAttribute(s - 10), bucketAttribute(s - 62)],
    });
    expect(d.remaining).toBe(4);
    expect(apply(item, d.claim!)).toEqual({ [RH]: s, [RN]: 1, [RQS]: s - 3, [RQ]: 4, [RP]: 'a:1', status: 'active' });
  });

  it("converts the per-second form within its head second: the head's count carries on with this request added", () => {
    const item = { [BUCKET_HEAD_ATTRIBUTE]: s, [bucketAttribute(s)]: 2, [bucketAttribute(s - 5)]: 1 };
    const d = decide(ringOf(item), now, 10);
    expect(d.claim?.move).toEqual({ from: { second: s, attribute: bucketAttribute(s) }, count: 1, packed: '5:1' });
    expect(d.claim?.guard).toEqual({ attribute: bucketAttribute(s), cap: 9 });
    expect(apply(item, d.claim!)).toEqual({ [RH]: s, [RN]: 3, [RP]: '5:1' });
  });

  it('folds live slots into the ring, skips expired ones, and removes at most a bounded number per write', () => {
    const legacy: Record<string, unknown> = {};
    // Tenths of a second since 2026 (the compact form) and a millisecond epoch (the first form).
    legacy.rl0 = Math.ceil((now - 2_000 - RING_EPOCH_MS) / 100);
    legacy.rl1 = now - 1_000;
    legacy.rl2 = now - 70_000;
    for (let i = 3; i < 150; i++) legacy[`rl${i}`] = now - 120_000;
    const d = decide(ringOf(legacy), now, 3);
    expect(d.remaining).toBe(0);
    expect(d.claim).toMatchObject({ head: undefined, bucketHead: null, move: { count: 1, packed: '1:1,2:1' } });
    expect(d.claim?.removeLegacy).toHaveLength(LEGACY_REMOVALS_PER_WRITE);
    const after = apply(legacy, d.claim!);
    // Once the ring has a head, what an earlier form left is only removed, never counted again.
    expect(decide(ringOf(after), now, 3).allowed).toBe(false);
    expect(decide(ringOf(after), now, 4).claim?.removeLegacy).toHaveLength(50);
    expect(decide(ringOf({ ...after, [BUCKET_HEAD_ATTRIBUTE]: s, [bucketAttribute(s)]: 9 }), now, 4).allowed).toBe(
      true,
    );
  });

  it('carries every attribute of the allowance over a rotation, and nothing else', () => {
    const allowance = [RH, RN, RQS, RQ, RP, BUCKET_HEAD_ATTRIBUTE, 'rc0', 'rcy', 'rl0', 'rl59'];
    expect([...allowance, 'status', 'uses', 'rcz', 'rlx', 'rhx'].filter(isRateAttribute)).toEqual(allowance);
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
    const seconds = Array.from({ length: RING_SIZE - 2 }, (_, i): [number, number] => [s - 2 - i, 1000]);
    Object.assign(item, { [RH]: s, [RN]: 1000, [RQS]: s - 1, [RQ]: 1000, [RP]: packCounts(s, seconds) });
    expect(ringOf(item).counts.size).toBe(RING_SIZE);
    expect(itemSize(item)).toBeLessThan(1024);
  });
});
