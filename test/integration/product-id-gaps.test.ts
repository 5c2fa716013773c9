import { newContext } from '#shared/context.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { createStore } from '#fixtures/api.ts';
import { productDraft, seedProduct } from '#fixtures/catalog.ts';
import { counted } from '#fixtures/context.ts';
import { insertReserved, ProductIds } from '#app/product-ids.ts';
import { listProducts } from '#app/product-reads.ts';
import { numbered } from '#domain/product/product-write.ts';
import { closeReservations, readProductSequence, reserveProductIds } from '#db/core/sequence.ts';
import { getProductsByIds } from '#db/product/repo.ts';

/**
 * Product ids reserved under contention and the gaps they leave (docs/catalog-writes.md, "Ids
 * under contention"), against DynamoDB Local.
 */
const draft = (storeId: string, name: string) => productDraft(storeId, { name, offers: [{ price: 1 }] });
const drafts = (storeId: string, from: number, n: number) =>
  Array.from({ length: n }, (_, i) => draft(storeId, `P${from + i}`));

/** A store whose sequence moved after `stale` was read: the request's guarded insert loses and it reserves. */
async function contendedStore() {
  const storeId = await createStore();
  await seedProduct(storeId, { name: 'First' });
  return { storeId, stale: { last: 0, offers: 0, gaps: [], open: [] } };
}

/** Inserts `drafts` with the reserved ids from `firstId` on, as a holder does (no close). */
async function insertWith(storeId: string, ids: { firstId: number; firstOffer: number }, names: string[]) {
  const products = numbered(
    names.map((n) => draft(storeId, n)),
    ids.firstId,
    ids.firstOffer,
  );
  const outcome = await insertReserved(newContext(), storeId, products, [], Number.POSITIVE_INFINITY);
  expect(outcome.kind).toBe('inserted');
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const pageIds = async (storeId: string, page: number, now?: number) => {
  const listed = await listProducts(newContext(), storeId, { page, limit: 10 }, now);
  return { ids: listed.products.map((p) => p.id), total: listed.total };
};

describe('id reservations a request never closed', () => {
  it('a killed request: counted as reserved until expiry, then settled from the products that exist', async () => {
    const { storeId, stale } = await contendedStore();
    // The request loses its guarded insert, reserves 30 ids (2..31) for the batch, inserts 19 of
    // them and dies before `finish`, as a Lambda stopped mid-request does.
    const ids = new ProductIds(newContext(), storeId, stale);
    expect((await ids.insert(drafts(storeId, 1, 19), { products: 30, offers: 30 })).kind).toBe('inserted');
    const [reservation] = (await readProductSequence(newContext(), storeId)).open;
    expect(reservation).toMatchObject({ firstId: 2, count: 30 });
    const expiresAt = reservation?.expiresAt as number;

    // Before expiry the reader settles nothing: the reserved ids count, as they did while the request ran.
    const before = await Promise.all([1, 2, 3, 4].map((p) => pageIds(storeId, p)));
    expect(before.map((p) => p.ids)).toEqual([range(1, 10), range(11, 20), [], []]);
    expect(before[0]?.total).toBe(31);
    expect(await pageIds(storeId, 1, expiresAt - 1)).toEqual(before[0]);
    expect((await readProductSequence(newContext(), storeId)).open).toHaveLength(1);

    // Once it has expired, the first reader settles it: ids 21..31 hold no product.
    const after = await Promise.all([1, 2, 3].map((p) => pageIds(storeId, p, expiresAt)));
    expect(after.map((p) => p.ids)).toEqual([range(1, 10), range(11, 20), []]);
    expect(after.map((p) => p.total)).toEqual([20, 20, 20]);
    expect(await readProductSequence(newContext(), storeId)).toMatchObject({ last: 31, gaps: range(21, 31), open: [] });

    // Products created afterwards list right after the gaps.
    await seedProduct(storeId, { name: 'Later 1' });
    await seedProduct(storeId, { name: 'Later 2' });
    const later = await Promise.all([1, 2, 3].map((p) => pageIds(storeId, p)));
    expect(later.map((p) => p.ids)).toEqual([range(1, 10), range(11, 20), [32, 33]]);
    expect(later[2]?.total).toBe(22);
  });

  it('an insert whose outcome was unknown: the one that landed is a product, the one that did not a gap', async () => {
    const storeId = await createStore();
    await seedProduct(storeId, { name: 'First' });
    // Four ids reserved: 2 and 3 inserted (one of them confirmed, the other answered "did not
    // confirm" but landed), 4 never landed, 5 known unused and recorded while the reservation stays
    // open (what `finish` does for a request with an undetermined insert).
    const reserved = await reserveProductIds(newContext(), storeId, 4, 4);
    expect(reserved.firstId).toBe(2);
    await insertWith(storeId, reserved, ['Confirmed', 'Landed unconfirmed']);
    await closeReservations(newContext(), storeId, [], [5]);
    expect(await pageIds(storeId, 1)).toEqual({ ids: [1, 2, 3], total: 4 });

    const now = reserved.reservation.expiresAt + 1;
    // Two readers at once settle it the same way.
    const [a, b] = await Promise.all([pageIds(storeId, 1, now), pageIds(storeId, 1, now)]);
    expect(a).toEqual({ ids: [1, 2, 3], total: 3 });
    expect(b).toEqual(a);
    expect(await readProductSequence(newContext(), storeId)).toMatchObject({ last: 5, gaps: [4, 5], open: [] });
    expect((await getProductsByIds(newContext(), storeId, [2, 3, 4], true)).map((p) => p.name)).toEqual([
      'Confirmed',
      'Landed unconfirmed',
    ]);
  });

  it('no insert starts with a reservation past its usable time', async () => {
    const storeId = await createStore();
    const reserved = await reserveProductIds(newContext(), storeId, 1, 1);
    const products = numbered([draft(storeId, 'Too late')], reserved.firstId, reserved.firstOffer);
    expect((await insertReserved(newContext(), storeId, products, [], Date.now() - 1)).kind).toBe('out_of_time');
    expect(await getProductsByIds(newContext(), storeId, [reserved.firstId], true)).toEqual([]);
  });
});

describe('DynamoDB cost of a contended batch', () => {
  const measured: string[] = [];
  afterAll(() => console.log(['case | calls | operations | RCU | WCU', ...measured].join('\n')));

  const record = (label: string, s: { calls: number; ops: string[]; rcu: number; wcu: number }) =>
    measured.push(`${label} | ${s.calls} | ${s.ops.join(',')} | ${s.rcu} | ${s.wcu}`);

  it('38 new products after a lost race, every reserved id used, then with 2 left unused', async () => {
    for (const [label, expected] of [
      ['38 new, all reserved ids used', 38],
      ['38 new, 2 reserved ids unused', 40],
    ] as const) {
      const { storeId, stale } = await contendedStore();
      const { stats } = await counted(async (ctx) => {
        const ids = new ProductIds(ctx, storeId, stale);
        const announced = { products: expected, offers: expected };
        expect((await ids.insert(drafts(storeId, 1, 19), announced)).kind).toBe('inserted');
        expect((await ids.insert(drafts(storeId, 20, 19), announced)).kind).toBe('inserted');
        await ids.finish();
      });
      record(label, stats);
      const { stats: listed, result } = await counted((ctx) => listProducts(ctx, storeId, { page: 1, limit: 50 }));
      expect(result.total).toBe(39);
      record(`${label}: list page 1 after`, listed);
    }
  });

  it('the list that settles an expired reservation, and the one after it', async () => {
    const { storeId, stale } = await contendedStore();
    const ids = new ProductIds(newContext(), storeId, stale);
    expect((await ids.insert(drafts(storeId, 1, 19), { products: 38, offers: 38 })).kind).toBe('inserted');
    const [reservation] = (await readProductSequence(newContext(), storeId)).open;
    const now = (reservation?.expiresAt as number) + 1;
    const settling = await counted((ctx) => listProducts(ctx, storeId, { page: 1, limit: 50 }, now));
    expect(settling.result.total).toBe(20);
    record('list page 1 settling an expired reservation of 38 ids', settling.stats);
    const next = await counted((ctx) => listProducts(ctx, storeId, { page: 1, limit: 50 }, now));
    expect(next.result.total).toBe(20);
    record('list page 1 after it', next.stats);
  });
});
