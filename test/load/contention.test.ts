import { describe, expect, it } from 'vitest';
import { client, createKey, createStore, type ApiResponse } from '#fixtures/api.ts';
import { keyPool } from '#fixtures/key-pool.ts';
import { closeReservations, readProductSequence, reservedIds, reserveProductIds } from '#db/core/sequence.ts';
import { existingProductIds } from '#db/product/repo.ts';
import { ProductIds } from '#app/product-ids.ts';
import { listProducts } from '#app/product-reads.ts';
import { productDraft } from '#fixtures/catalog.ts';
import { DeadlineExceeded, remainingMs } from '#domain/time.ts';
import { newContext } from '#shared/context.ts';
import { expectBoundedRefusals, untilApplied, useCountingGateway } from '#fixtures/hot-writes.ts';

/**
 * The contention suite (docs/catalog-writes.md, "Ids under contention" and "Time budget"): many
 * writers of one store, one product or one new external id at once, over real HTTP against the
 * local stack (loopback only). Bounded: a fixed number of requests, each answered within the
 * request budget. What must hold whatever the machine's speed: no refusal but the retryable 429
 * (contended) or 503 (out of time) of an item or write that wrote nothing, no other 5xx, every
 * accepted write stored and listed, no duplicate, unique ids, and a list `total` equal to the
 * products there are.
 */
const RW = ['catalog:read', 'catalog:write'] as const;
const freshClient = async (storeId: string) => client((await createKey(storeId, RW)).token);

type Listed = { id: number; name: string; sku: string | null; quantity: number; description?: string };

/** Every product of the store through the page-number list (50 a page), and the `total` it states. */
async function listAll(storeId: string): Promise<{ products: Listed[]; total: number }> {
  const readers = keyPool(storeId, ['catalog:read'], 50);
  const first = await (await readers()).get('/products?limit=50');
  expect(first.status).toBe(200);
  const products: Listed[] = [...first.body.data];
  for (let page = 2; page <= first.body.last_page; page++) {
    const res = await (await readers()).get(`/products?limit=50&page=${page}`);
    expect(res.status).toBe(200);
    products.push(...res.body.data);
  }
  return { products, total: first.body.total };
}

/**
 * Reserved ids that are neither a product nor a recorded gap: those of reservations still open
 * (a request's closing write that did not make it in time on this loaded machine). The list
 * counts them until a reader settles them once they expire.
 */
async function unsettledIds(storeId: string): Promise<number> {
  const sequence = await readProductSequence(newContext(), storeId);
  const ids = sequence.open.flatMap(reservedIds).filter((id) => !sequence.gaps.includes(id));
  const existing = await existingProductIds(newContext(), storeId, ids);
  return ids.filter((id) => !existing.has(id)).length;
}

/**
 * The count once every open reservation is settled, as the first list after their expiry does:
 * for when no request is in flight any more.
 */
async function settledTotal(storeId: string): Promise<number> {
  const past = Math.max(Date.now(), ...(await readProductSequence(newContext(), storeId)).open.map((r) => r.expiresAt));
  return (await listProducts(newContext(), storeId, { page: 1, limit: 1 }, past)).total;
}

/**
 * A refusal a client may retry, having written nothing: 429 `resource_busy` (the write kept losing
 * to other writers of its product) or 503 `service_unavailable` (the request ran out of time).
 */
const isRetryableRefusal = (status: number, code: unknown) =>
  (status === 429 && code === 'resource_busy') || (status === 503 && code === 'service_unavailable');

function expectSingleAnswers(results: ApiResponse[]) {
  for (const r of results) {
    if (r.status === 200) continue;
    expect(isRetryableRefusal(r.status, r.body?.code), `unexpected ${r.status}: ${r.text}`).toBe(true);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  }
}

describe('writes under contention', () => {
  const hot = useCountingGateway();
  it('20 keys × a batch of 100 new products on one store at once: every item stored once or refused retryably', {
    timeout: 600_000,
  }, async () => {
    const storeId = await createStore();
    const writers = await Promise.all(Array.from({ length: 20 }, () => freshClient(storeId)));
    const items = (k: number) =>
      Array.from({ length: 100 }, (_, i) => ({
        external_id: `k${k}-p${i}`,
        name: `Load k${k} p${i}`,
        price: 100 + i,
        quantity: i,
        sku: `K${k}-P${i}`,
      }));
    const answers = await Promise.all(
      writers.map((api, k) => api.post('/catalog/products/batch', { items: items(k) })),
    );

    const accepted = new Map<string, number>();
    const refused = new Set<string>();
    // Answered "may have been written": the store confirmed nothing in time (a very slow machine).
    const undetermined = new Set<string>();
    const retry = new Map<number, number[]>();
    for (const [k, res] of answers.entries()) {
      // The request never fails as a whole: each item carries its own outcome.
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toHaveLength(100);
      for (const [i, item] of res.body.data.entries()) {
        expect(item.external_id).toBe(`k${k}-p${i}`);
        if (item.status === 200) accepted.set(`Load k${k} p${i}`, item.data.id);
        else {
          expect(isRetryableRefusal(item.status, item.error?.code), JSON.stringify(item)).toBe(true);
          (/did not confirm/.test(item.error.message) ? undetermined : refused).add(`Load k${k} p${i}`);
          retry.set(k, [...(retry.get(k) ?? []), i]);
        }
      }
    }
    expect(accepted.size + refused.size + undetermined.size).toBe(2000);
    expect(new Set(accepted.values()).size).toBe(accepted.size);

    const { products, total } = await listAll(storeId);
    const byName = new Map(products.map((p) => [p.name, p]));
    // No duplicate: one product per external id, ids unique.
    expect(byName.size).toBe(products.length);
    expect(new Set(products.map((p) => p.id)).size).toBe(products.length);
    // Every accepted item is stored with the id it was answered with; every refused one is absent.
    for (const [name, id] of accepted) expect(byName.get(name)?.id, name).toBe(id);
    for (const name of refused) expect(byName.has(name), name).toBe(false);
    expect(products.length).toBeGreaterThanOrEqual(accepted.size);
    expect(products.length).toBeLessThanOrEqual(accepted.size + undetermined.size);
    // Every id handed out is a product, a recorded gap or held by an open reservation.
    expect(total).toBe(products.length + (await unsettledIds(storeId)));

    // What a client does with the retryable answers: send those items again. Then all 2,000 are there, once each.
    for (let round = 0; round < 10 && retry.size > 0; round++) {
      const again = await Promise.all(
        [...retry].map(async ([k, is]) => {
          const all = items(k);
          const res = await writers[k]!.post('/catalog/products/batch', { items: is.map((i) => all[i]) });
          expect(res.status, res.text).toBe(200);
          return [k, is.filter((_, j) => res.body.data[j].status !== 200)] as const;
        }),
      );
      retry.clear();
      for (const [k, left] of again) if (left.length > 0) retry.set(k, left);
    }
    expect(retry.size).toBe(0);
    const settled = await listAll(storeId);
    expect(settled.products).toHaveLength(2000);
    expect(new Set(settled.products.map((p) => p.name)).size).toBe(2000);
    expect(new Set(settled.products.map((p) => p.id)).size).toBe(2000);
    for (const [name, id] of accepted) expect(settled.products.find((p) => p.name === name)?.id, name).toBe(id);
    expect(settled.total).toBe(2000 + (await unsettledIds(storeId)));
    expect(await settledTotal(storeId)).toBe(2000);
    expect((await listAll(storeId)).total).toBe(2000);
  });

  it('55 parallel PATCHes of one product from one key, each sent until applied: none lost, every refusal bounded and retryable', {
    timeout: 180_000,
  }, async () => {
    const storeId = await createStore();
    const api = hot.client((await createKey(storeId, RW)).token);
    expect((await api.put('/catalog/products/hot-x', { name: 'Hot', price: 500, quantity: 0 })).status).toBe(200);

    const outcomes = await Promise.all(
      Array.from({ length: 55 }, (_, i) =>
        untilApplied(() => api.patch('/catalog/products/hot-x', { quantity: i + 1, description: `patch ${i + 1}` })),
      ),
    );
    expectBoundedRefusals(
      outcomes.flatMap((o) => o.refused),
      hot.roundCalls,
    );
    const results = outcomes.map((o) => o.answer);
    // Every PATCH applied in the end, and its 200 answers the state its own PATCH made.
    for (const [i, r] of results.entries()) {
      expect(r.status, r.text).toBe(200);
      expect(r.body.data.quantity).toBe(i + 1);
    }
    // updated_at strictly increased with every applied write: no two share one.
    expect(new Set(results.map((r) => r.body.data.updated_at)).size).toBe(55);
    const last = results
      .map((r) => r.body.data)
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at))
      .at(-1);

    const { products, total } = await listAll(storeId);
    expect(total).toBe(1);
    expect(products).toHaveLength(1);
    const final = products[0] as Listed;
    // The last write wins whole: the stored state is the last applied PATCH, never a mix.
    expect(final.quantity).toBe(last.quantity);
    const detail = await (await freshClient(storeId)).get(`/products/${final.id}`);
    expect(detail.body.data.description).toBe(`patch ${final.quantity}`);
  });

  it('50 parallel PUTs of one new external id with different bodies, beside other creates: one product, one whole body', {
    timeout: 180_000,
  }, async () => {
    const storeId = await createStore();
    const api = await freshClient(storeId);
    // Other load on the same store's sequence meanwhile: 5 keys creating 100 products each.
    const others = await Promise.all(Array.from({ length: 5 }, () => freshClient(storeId)));
    const load = others.map((o, k) =>
      o.post('/catalog/products/batch', {
        items: Array.from({ length: 100 }, (_, i) => ({
          external_id: `o${k}-${i}`,
          name: `Other ${k} ${i}`,
          price: 1,
          quantity: 1,
        })),
      }),
    );
    const bodies = Array.from({ length: 50 }, (_, i) => ({
      name: `Body ${i}`,
      price: 1000 + i,
      quantity: i,
      sku: `ONE-${i}`,
    }));
    const results = await Promise.all(bodies.map((b) => api.put('/catalog/products/the-one', b)));
    const loaded = await Promise.all(load);

    expectSingleAnswers(results);
    const ok = results.filter((r) => r.status === 200);
    expect(new Set(ok.map((r) => r.body.data.id)).size).toBeLessThanOrEqual(1);
    let others200 = 0;
    for (const res of loaded) {
      expect(res.status, res.text).toBe(200);
      for (const item of res.body.data) {
        if (item.status === 200) others200++;
        else expect(isRetryableRefusal(item.status, item.error?.code), JSON.stringify(item)).toBe(true);
      }
    }

    const { products, total } = await listAll(storeId);
    const theOne = products.filter((p) => p.name.startsWith('Body '));
    expect(theOne).toHaveLength(ok.length > 0 ? 1 : 0);
    expect(new Set(products.map((p) => p.id)).size).toBe(products.length);
    expect(products.length).toBe(others200 + theOne.length);
    expect(total).toBe(products.length + (await unsettledIds(storeId)));
    expect(await settledTotal(storeId)).toBe(products.length);
    if (theOne[0]) {
      const i = bodies.findIndex((b) => b.name === theOne[0]!.name);
      // The stored product is one accepted body entirely, and its SKU link the only one.
      expect(ok.some((r) => r.body.data.name === bodies[i]!.name)).toBe(true);
      expect(theOne[0]).toMatchObject({ quantity: i, sku: `ONE-${i}` });
      expect(ok[0]!.body.data.id).toBe(theOne[0].id);
    }
  });

  it('lists by position around the gaps unused reserved ids leave, with total counting products only', async () => {
    const storeId = await createStore();
    const api = await freshClient(storeId);
    for (const x of ['a', 'b', 'c'])
      expect((await api.put(`/catalog/products/${x}`, { name: `Gap ${x}`, price: 1 })).status).toBe(200);
    // What racers that reserved ids and then lost their external id leave behind: ids 4 and 5, recorded unused.
    const reserved = await reserveProductIds(newContext(), storeId, 2, 2);
    expect(reserved.firstId).toBe(4);
    await closeReservations(newContext(), storeId, [reserved.reservation], [4, 5]);
    for (const x of ['d', 'e', 'f'])
      expect((await api.put(`/catalog/products/${x}`, { name: `Gap ${x}`, price: 1 })).status).toBe(200);

    const pages = await Promise.all([1, 2, 3, 4].map((p) => api.get(`/products?limit=2&page=${p}`)));
    expect(pages.map((r) => r.body.data.map((p: Listed) => p.id))).toEqual([[1, 2], [3, 6], [7, 8], []]);
    expect(pages.flatMap((r) => r.body.data.map((p: Listed) => p.name))).toEqual([
      'Gap a',
      'Gap b',
      'Gap c',
      'Gap d',
      'Gap e',
      'Gap f',
    ]);
    expect(pages[0]!.body).toMatchObject({ total: 6, last_page: 3 });
    expect(pages[1]!.body).toMatchObject({ from: 3, to: 4 });
  });
  it('closes the reservation with the ids it left unused even when its budget has run out', async () => {
    const storeId = await createStore();
    const api = await freshClient(storeId);
    expect((await api.put('/catalog/products/first', { name: 'First', price: 1 })).status).toBe(200);
    const draft = productDraft(storeId, { name: 'Late', offers: [{ price: 1 }] });
    // A request that read the sequence before another create moved it: its guarded insert loses,
    // and it reserves one block (3 ids) for the products it may still create, then uses one.
    // The request's budget, ended below by its signal as a timer ends a real one.
    const budget = new AbortController();
    const ctx = { ...newContext(), deadline: Date.now() + 60_000, signal: budget.signal };
    const ids = new ProductIds(ctx, storeId, { last: 0, offers: 0, gaps: [], open: [] });
    const inserted = await ids.insert([draft], { products: 3, offers: 3 });
    expect(inserted.kind).toBe('inserted');
    // A long batch ends with its budget spent (waited for, not timed): the unused ids are still recorded.
    budget.abort(new DeadlineExceeded(60_000));
    expect(remainingMs(ctx)).toBe(0);
    await ids.finish();
    expect(await readProductSequence(newContext(), storeId)).toMatchObject({ gaps: [3, 4], open: [] });
    const list = await api.get('/products?limit=50');
    expect(list.body.data.map((p: Listed) => p.name)).toEqual(['First', 'Late']);
    expect(list.body.total).toBe(2);
  });
});
