import { describe, expect, it } from 'vitest';
import { client, createKey, createStore, type ApiResponse } from '#fixtures/api.ts';
import { seedProduct } from '#fixtures/catalog.ts';
import { expectBoundedRefusals, untilApplied, useCountingGateway } from '#fixtures/hot-writes.ts';

const RW = ['catalog:read', 'catalog:write'] as const;
const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

async function freshKey(storeId: string) {
  return client((await createKey(storeId, RW)).token);
}

/**
 * The bursts on one product send each write until it is applied, as a client does with the
 * retryable 429 `resource_busy` of a write that kept losing to the others (docs/catalog-writes.md,
 * "One hot product"); what they assert holds over the writes applied.
 */
describe('concurrent catalog writes', () => {
  const gateway = useCountingGateway();
  /** A key of the store on the counting gateway, its authorizer cache warm. */
  const hotKey = async (storeId: string) => {
    const api = gateway.client((await createKey(storeId, RW)).token);
    await api.get('/products?limit=1');
    return api;
  };
  /** `counted`: a refused write made at most the bound's calls (a PUT's insert transactions come before its bounded rounds). */
  const burst = async (sends: (() => Promise<ApiResponse>)[], counted = false) => {
    const outcomes = await Promise.all(sends.map((send) => untilApplied(send)));
    const refused = outcomes.flatMap((o) => o.refused);
    expectBoundedRefusals(refused, counted ? gateway.roundCalls : undefined);
    return outcomes.map((o) => o.answer);
  };

  it('creates exactly one product when 20 identical PUTs of one external id race (list total +1, gaps skipped)', async () => {
    const storeId = await createStore();
    // Products of the store's own admin already exist: the new one must get the next dense id.
    await seedProduct(storeId, { name: 'Existing 1' });
    await seedProduct(storeId, { name: 'Existing 2' });
    const api = await hotKey(storeId);
    const reader = await freshKey(storeId);
    const before = (await reader.get('/products')).body.total;
    expect(before).toBe(2);

    const body = { name: 'Racing Kettle', price: 3900, quantity: 4, sku: 'KETTLE-1' };
    const results = await burst(Array.from({ length: 20 }, () => () => api.put('/catalog/products/kettle', body)));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    const productIds = new Set(results.map((r) => r.body.data.id));
    expect(productIds.size).toBe(1);
    // The next id, or a later one when racers that lost the sequence reserved ids first (their unused ids are gaps).
    const [id] = productIds as Set<number>;
    expect(id).toBeGreaterThanOrEqual(3);
    // Every answer describes the one product; only its creation wrote it.
    expect(new Set(results.map((r) => r.body.data.created_at)).size).toBe(1);

    const after = await reader.get('/products');
    expect(after.body.total).toBe(before + 1);
    expect(after.body.data.map((p: { id: number }) => p.id)).toEqual([1, 2, id]);
    expect((await reader.get(`/products?${q({ 'filter[name]': 'kettle' })}`)).body.total).toBe(1);
    expect((await reader.get(`/products?${q({ 'filter[sku]': 'KETTLE-1' })}`)).body.total).toBe(1);
  });

  it('creates exactly one product when 20 different PUTs of one external id race, ending in one of the bodies', async () => {
    const storeId = await createStore();
    const api = await hotKey(storeId);
    const bodies = Array.from({ length: 20 }, (_, i) => ({
      name: `Variant body ${i}`,
      price: 100 + i,
      quantity: i,
      sku: `RACE-${i}`,
    }));
    const results = await burst(bodies.map((b) => () => api.put('/catalog/products/racer', b)));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);

    const reader = await freshKey(storeId);
    const list = await reader.get('/products?include=offers');
    expect(list.body.total).toBe(1);
    const final = list.body.data[0];
    const i = bodies.findIndex((b) => b.name === final.name);
    expect(i).toBeGreaterThanOrEqual(0);
    // The last write applied is what is stored.
    const last = results
      .map((r) => r.body.data)
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at))
      .at(-1);
    expect(last.name).toBe(final.name);
    // The stored product is one body entirely, never a mix of two.
    expect(final).toMatchObject({ min_price: 100 + i, quantity: i, sku: `RACE-${i}` });
    // And the SKU index agrees with it: exactly one SKU link survives.
    let linked = 0;
    for (const b of bodies) linked += (await reader.get(`/products?${q({ 'filter[sku]': b.sku })}`)).body.total;
    expect(linked).toBe(1);
  });

  it('gives 20 racing PUTs of different external ids 20 products with dense ids', async () => {
    const storeId = await createStore();
    const api = await freshKey(storeId);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.put(`/catalog/products/dense-${i}?include=offers`, { name: `Dense ${i}`, price: i }),
      ),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.map((r) => r.body.data.id).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => i + 1),
    );
    const offerIds = results.map((r) => r.body.data.offers[0].id);
    expect(new Set(offerIds).size).toBe(20);
    const list = await (await freshKey(storeId)).get('/products?limit=50');
    expect(list.body.total).toBe(20);
    expect(list.body.data).toHaveLength(20);
  });

  it('keeps every field of concurrent PATCHes that each change a different field', async () => {
    const storeId = await createStore();
    const api = await hotKey(storeId);
    await api.put('/catalog/tags/hot', { value: 'hot' });
    await api.put('/catalog/categories/kitchen', { name: 'Kitchen' });
    for (let round = 0; round < 3; round++) {
      const xid = `merge-${round}`;
      const created = (await api.put(`/catalog/products/${xid}`, { name: 'Original', price: 1, sku: 'ORIG' })).body
        .data;
      const patches = [
        { name: `Renamed ${round}` },
        { price: 2500 },
        { quantity: 9 },
        { sku: `NEW-${round}` },
        { description: 'merged' },
        { status: 'archived' },
        { image_url: 'https://img.example.com/m.png' },
        { tag_external_ids: ['hot'] },
        { category_external_ids: ['kitchen'] },
      ];
      const results = await burst(
        patches.map((p) => () => api.patch(`/catalog/products/${xid}`, p)),
        true,
      );
      expect(results.map((r) => r.status)).toEqual(Array(patches.length).fill(200));
      const final = (await api.get(`/products/${created.id}`)).body.data;
      expect(final).toMatchObject({
        name: `Renamed ${round}`,
        min_price: 2500,
        quantity: 9,
        sku: `NEW-${round}`,
        description: 'merged',
        is_archived: true,
        thumbnail_url: 'https://img.example.com/m.png',
        category_id: expect.any(Number),
        created_at: created.created_at,
      });
      // The last answer to land saw every other change (each PATCH merged onto the latest state).
      const latest = results
        .map((r) => r.body.data)
        .sort((a, b) => a.updated_at.localeCompare(b.updated_at))
        .at(-1);
      expect(latest).toMatchObject({
        tag_external_ids: ['hot'],
        category_external_ids: ['kitchen'],
        name: `Renamed ${round}`,
      });
      // updated_at strictly increased with every one of the changes.
      expect(new Set(results.map((r) => r.body.data.updated_at)).size).toBe(patches.length);
      expect((await api.get(`/products?${q({ 'filter[sku]': 'ORIG' })}`)).body.total).toBe(0);
    }
  });

  it('creates one category when 10 PUTs of its external id race', async () => {
    const storeId = await createStore();
    const api = await freshKey(storeId);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => api.put('/catalog/categories/racing', { name: 'Racing' })),
    );
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
  });
});
