import { describe, expect, it } from 'vitest';
import { parseReservation, reservationAttribute, reservedIds, sequenceOf, usableUntil } from '#db/core/sequence.ts';

/** The open reservations of the product sequence item (docs/catalog-writes.md, "Ids under contention"). */
describe('product id reservations', () => {
  it('reads back what a reservation attribute holds: the last id before the block, then count and expiry', () => {
    const attribute = reservationAttribute(30, 1_800_000_120_000, 'a1b2c3d4');
    expect(attribute).toBe('open:30:1800000120000:a1b2c3d4');
    expect(parseReservation(attribute, 41)).toEqual({
      attribute,
      firstId: 42,
      count: 30,
      expiresAt: 1_800_000_120_000,
    });
    // The first reservation of a store: the counter was absent, stored as 0.
    expect(parseReservation('open:1:5:n', 0)).toMatchObject({ firstId: 1, count: 1 });
    expect(reservedIds({ attribute, firstId: 42, count: 3, expiresAt: 0 })).toEqual([42, 43, 44]);
    expect(usableUntil({ attribute, firstId: 1, count: 1, expiresAt: 120_000 })).toBe(60_000);
  });

  it('ignores every other attribute and malformed entries', () => {
    for (const [name, value] of [
      ['value', 41],
      ['gaps', 41],
      ['offer_seq', 41],
      ['opened:1:5:n', 41],
      ['open:1:5', 41],
      ['open:1:5:', 41],
      ['open:1:5:n:extra', 41],
      ['open:0:5:n', 41],
      ['open:-2:5:n', 41],
      ['open:x:5:n', 41],
      ['open:1:soon:n', 41],
      ['open:1.5:5:n', 41],
      ['open:1:5:n', 'forty'],
      ['open:1:5:n', -1],
      ['open:1:5:n', undefined],
    ] as const)
      expect(parseReservation(name, value), `${name} = ${value}`).toBeUndefined();
  });

  it('a sequence item lists its open reservations beside counters and gaps', () => {
    const item = {
      pk: 'S#1',
      sk: 'SEQ#product',
      value: 60,
      offer_seq: 70,
      gaps: new Set([12, 3]),
      'open:10:900:aa': 40,
      'open:10:800:bb': 50,
    };
    const sequence = sequenceOf(item);
    expect(sequence).toMatchObject({ last: 60, offers: 70, gaps: [3, 12] });
    expect(sequence.open.map((r) => [r.firstId, r.count, r.expiresAt]).sort()).toEqual([
      [41, 10, 900],
      [51, 10, 800],
    ]);
    expect(sequenceOf(undefined)).toEqual({ last: 0, offers: 0, gaps: [], open: [] });
  });
});
