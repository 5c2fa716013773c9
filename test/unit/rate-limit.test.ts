import { describe, expect, it } from 'vitest';
import { itemSize } from '../../bench/billing-units.ts';
import { ABILITIES } from '#domain/key/abilities.ts';
import {
  afterClaim,
  decide,
  decodeSlot,
  encodeSlot,
  freeSlotBound,
  SLOT_EPOCH_MS,
  slotsOf,
  WINDOW_MS,
} from '#domain/key/api-key.ts';

const now = 1_800_000_000_000;

describe('sliding-window slots', () => {
  it('admits into a free slot and reports what remains', () => {
    const d = decide([], now, 3, () => 0);
    expect(d).toEqual({ allowed: true, slot: 0, limit: 3, remaining: 2, resetSeconds: 60 });
  });

  it('refuses when every slot holds a request of the last 60 s, with Retry-After until the oldest expires', () => {
    const d = decide([now - 50_000, now - 1_000, now - 10], now, 3);
    expect(d.allowed).toBe(false);
    expect(d.remaining).toBe(0);
    expect(d.resetSeconds).toBe(10);
  });

  it('reuses a slot whose request is exactly 60 s old or older', () => {
    const d = decide([now - WINDOW_MS, now - 1, now - 2], now, 3);
    expect(d).toMatchObject({ allowed: true, slot: 0, remaining: 0 });
  });

  it('never answers a Retry-After below one second', () => {
    const d = decide([now - WINDOW_MS + 1, now, now], now, 3);
    expect(d.allowed).toBe(false);
    expect(d.resetSeconds).toBe(1);
  });

  it('spreads parallel claims over the free slots', () => {
    const picks = new Set([0, 0.2, 0.4, 0.6, 0.8].map((r) => decide([], now, 5, () => r).slot));
    expect(picks.size).toBe(5);
  });

  it('ignores slots beyond a lowered limit and reads slot attributes by index', () => {
    const item = { rl0: now, rl1: 'x', rl4: now };
    expect(slotsOf(item, 3)).toEqual([now, undefined, undefined]);
    expect(decide(slotsOf(item, 1), now, 1).allowed).toBe(false);
  });

  it('allows exactly `limit` requests in any 60 s when applied in sequence', () => {
    const slots: (number | undefined)[] = [];
    let admitted = 0;
    for (let t = 0; t < 120_000; t += 500) {
      const d = decide(slots, now + t, 60);
      if (d.allowed) {
        slots[d.slot!] = now + t;
        admitted++;
      }
      const inWindow = slots.filter((s) => s !== undefined && s > now + t - WINDOW_MS).length;
      expect(inWindow).toBeLessThanOrEqual(60);
    }
    expect(admitted).toBe(120);
  });

  it('after a claim, reports what the written item leaves: the requests committed before count too', () => {
    // Our slot (now) and a parallel request's (now - 5) are taken; one of three remains.
    expect(afterClaim([now, now - 5, undefined], now, 3)).toEqual({ remaining: 1, resetSeconds: 60 });
    expect(afterClaim([now, now - 30_000, now - 59_000], now, 3)).toEqual({ remaining: 0, resetSeconds: 1 });
    // A slot older than the window is free again.
    expect(afterClaim([now, now - WINDOW_MS, undefined], now, 3)).toEqual({ remaining: 2, resetSeconds: 60 });
  });
});

describe('compact slot times', () => {
  it('stores tenths of a second since 2026, rounded up, and reads them back in milliseconds', () => {
    const ms = Date.UTC(2026, 10, 25, 12, 0, 0, 1);
    expect(encodeSlot(ms)).toBe(Math.ceil((ms - SLOT_EPOCH_MS) / 100));
    expect(decodeSlot(encodeSlot(ms)) - ms).toBeGreaterThanOrEqual(0);
    expect(decodeSlot(encodeSlot(ms)) - ms).toBeLessThan(100);
    // Stored before the compact encoding: a millisecond epoch reads as itself.
    expect(decodeSlot(ms)).toBe(ms);
    expect(slotsOf({ rl0: ms, rl1: encodeSlot(ms) }, 2)).toEqual([ms, decodeSlot(encodeSlot(ms))]);
  });

  it('frees a slot exactly when its stored time is 60 s past: the condition bound and decide agree', () => {
    const t = Date.UTC(2026, 10, 25, 12, 0, 0, 0);
    for (const offset of [0, 1, 50, 99, 100, 101]) {
      const stored = encodeSlot(t + offset);
      for (const later of [59_900, 59_999, 60_000, 60_099, 60_100, 60_200]) {
        const now = t + offset + later;
        const freeByCondition = stored <= freeSlotBound(now);
        const freeByDecide = decide([decodeSlot(stored)], now, 1).allowed;
        expect(freeByCondition, `${offset} ${later}`).toBe(freeByDecide);
        // Never free before its request is a full window old.
        if (freeByDecide) expect(now - (t + offset)).toBeGreaterThanOrEqual(WINDOW_MS);
      }
    }
  });

  it('says at most 60 s until the window has room, though a slot is stored up to 100 ms ahead', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0, 1);
    expect(afterClaim([decodeSlot(encodeSlot(now))], now, 1).resetSeconds).toBe(60);
  });

  it('keeps the token item under 1 KB at the default allowance of 60 (one write unit per request)', () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0, 0);
    const item: Record<string, unknown> = {
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
    };
    for (let i = 0; i < 60; i++) item[`rl${i}`] = encodeSlot(now + i * 997);
    expect(itemSize(item)).toBeLessThan(1024);
  });
});
