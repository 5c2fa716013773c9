import { describe, expect, it } from 'vitest';
import { client, createKey, type ApiResponse, createStore, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { storeItems } from '#fixtures/content.ts';

const BATCH = '/catalog/products/batch';
/** Batches in flight at once, as a sync client would run them. */
const CONCURRENCY = 2;

const product = (xid: string, extra: Record<string, unknown> = {}) => ({
  external_id: xid,
  name: `Product ${xid}`,
  price: 1000,
  ...extra,
});
const productsOf = async (storeId: string) =>
  (await storeItems(storeId, 'PRODUCT#')).filter((i) => i.type === 'product');

describe('POST /catalog/products/batch', () => {
  it('loads 6,000 products with one key at the default allowance (60 requests) and every one reads back', async () => {
    const { storeId, key } = await storeWithKey(['catalog:write']);
    const api = client(key.token);
    const batches = Array.from({ length: 60 }, (_, b) =>
      Array.from({ length: 100 }, (_, i) => product(`sync-${b * 100 + i}`, { price: b * 100 + i })),
    );
    const answers: ApiResponse[] = [];
    const sent = Date.now();
    for (let i = 0; i < batches.length; i += CONCURRENCY)
      answers.push(
        ...(await Promise.all(batches.slice(i, i + CONCURRENCY).map((items) => api.post(BATCH, { items })))),
      );
    expect(answers.map((a) => a.status)).toEqual(Array(60).fill(200));
    expect(answers.every((a) => a.body.data.every((r: { status: number }) => r.status === 200))).toBe(true);
    // One allowance, counted rather than timed: each batch claimed one slot of the key's 60 and
    // the headers count them down, so 60 answers leave the key with none ... unless slots freed
    // up again meanwhile, which only a load slower than the minute (a loaded machine) allows.
    const remaining = answers.map((a) => Number(a.headers.get('ratelimit-remaining')));
    expect(answers.every((a) => a.headers.get('ratelimit-limit') === '60')).toBe(true);
    const oneMore = await api.post(BATCH, { items: [product('one-more')] });
    const elapsed = Date.now() - sent;
    if (elapsed < 60_000) {
      // Every slot was taken by this load and none can be free yet: the 61st is refused exactly.
      expect([...remaining].sort((a, b) => b - a)).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
      expect(oneMore.status).toBe(429);
    } else {
      // A slot may have come free; then the 61st took it, and never a 61st slot within any minute.
      expect(oneMore.status === 429 || Number(oneMore.headers.get('ratelimit-remaining')) < 60).toBe(true);
    }
    if (oneMore.status === 429) expect(Number(oneMore.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    // The 61st batch's one product is stored too when a freed slot admitted it.
    const extra = oneMore.status === 200 ? 1 : 0;
    const stored = await productsOf(storeId);
    expect(stored).toHaveLength(6000 + extra);
    const byXid = new Map(stored.map((p) => [p.external_id, p]));
    for (let n = 0; n < 6000; n++) expect(byXid.get(`sync-${n}`)?.offers[0].price).toBe(n);
    expect(byXid.has('one-more')).toBe(extra === 1);
    expect(new Set(stored.map((p) => p.id)).size).toBe(6000 + extra);
    expect(Math.max(...stored.map((p) => p.id))).toBe(6000 + extra);
  }, 600_000);

  it('stores the 97 good items of a batch with 3 bad ones, and answers each in request order', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const items: unknown[] = Array.from({ length: 100 }, (_, i) => product(`mix-${i}`));
    items[3] = product('mix-3', { price: -1 });
    items[50] = { external_id: 'mix-50', name: 'No price' };
    items[97] = product('mix-97', { category_external_ids: ['no-such-category'] });
    const res = await client(key.token).post(BATCH, { items });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(100);
    expect(res.body.data.map((r: { external_id: string }) => r.external_id)).toEqual(items.map((_, i) => `mix-${i}`));
    expect(res.body.data[3]).toMatchObject({
      status: 422,
      data: null,
      error: { code: 'validation_failed', field: 'price' },
    });
    expect(res.body.data[50]).toMatchObject({
      status: 422,
      data: null,
      error: { code: 'validation_failed', field: 'price' },
    });
    expect(res.body.data[97]).toMatchObject({
      status: 422,
      data: null,
      error: { code: 'unknown_reference', field: 'category_external_ids[0]' },
    });
    for (const bad of [3, 50, 97]) expectErrorShape(res.body.data[bad].error);
    expect(res.body.data[0]).toMatchObject({
      status: 200,
      error: null,
      data: { external_id: 'mix-0', name: 'Product mix-0' },
    });
    const stored = await productsOf(storeId);
    expect(stored.map((p) => p.external_id).sort()).toEqual(
      items
        .map((_, i) => `mix-${i}`)
        .filter((x) => !['mix-3', 'mix-50', 'mix-97'].includes(x))
        .sort(),
    );
  });

  it('answers exactly what the single PUT answers for the same write', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const api = client(key.token);
    const viaBatch = (await api.post(BATCH, { items: [product('same-1', { sku: 'S-1', quantity: 3 })] })).body.data[0]
      .data;
    const viaPut = (
      await api.put('/catalog/products/same-1', { name: 'Product same-1', price: 1000, sku: 'S-1', quantity: 3 })
    ).body.data;
    expect(viaPut).toEqual(viaBatch);
  });

  it('gives the same products when a batch is retried, and racing copies of one batch create each product once', async () => {
    const { storeId, key } = await storeWithKey(['catalog:write']);
    const api = client(key.token);
    const items = Array.from({ length: 20 }, (_, i) => product(`retry-${i}`));
    const first = await api.post(BATCH, { items });
    const again = await api.post(BATCH, { items });
    expect(again.body.data.map((r: { data: { id: number } }) => r.data.id)).toEqual(
      first.body.data.map((r: { data: { id: number } }) => r.data.id),
    );
    const racing = Array.from({ length: 10 }, (_, i) => product(`race-${i}`));
    const answers = await Promise.all([
      api.post(BATCH, { items: racing }),
      api.post(BATCH, { items: racing }),
      api.post(BATCH, { items: racing }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const ids = answers.map((a) => a.body.data.map((r: { data: { id: number } }) => r.data.id));
    expect(ids[1]).toEqual(ids[0]);
    expect(ids[2]).toEqual(ids[0]);
    expect(await productsOf(storeId)).toHaveLength(30);
  });

  it('patch mode changes only the supplied fields, and answers 404 for an external id this key does not have', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const api = client(key.token);
    await api.post(BATCH, { items: [product('p-1', { quantity: 5, sku: 'P1' })] });
    const res = await api.post(BATCH, {
      mode: 'patch',
      items: [
        { external_id: 'p-1', price: 2500 },
        { external_id: 'p-unknown', price: 1 },
      ],
    });
    expect(res.body.data[0]).toMatchObject({
      status: 200,
      data: { external_id: 'p-1', name: 'Product p-1', min_price: 2500, quantity: 5 },
    });
    expect(res.body.data[1]).toMatchObject({
      external_id: 'p-unknown',
      status: 404,
      data: null,
      error: { code: 'not_found' },
    });
  });

  it('refuses a batch naming one external id twice with 422 naming the second, and writes nothing', async () => {
    const { storeId, key } = await storeWithKey(['catalog:write']);
    const res = await client(key.token).post(BATCH, { items: [product('dup-a'), product('dup-b'), product('dup-a')] });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_failed', field: 'items[2].external_id' });
    expect(await productsOf(storeId)).toHaveLength(0);
  });

  it("answers an item that is not an object or has no valid external id as that item's 422", async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const res = await client(key.token).post(BATCH, {
      items: [42, { name: 'x', price: 1 }, product('bad id!'), product('fine')],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { external_id: string | null; status: number }) => [r.external_id, r.status])).toEqual(
      [
        [null, 422],
        [null, 422],
        [null, 422],
        ['fine', 200],
      ],
    );
    expect(res.body.data[1].error.field).toBe('external_id');
    expect(res.body.data[2].error.field).toBe('external_id');
  });

  it('refuses a malformed envelope with 422 naming the field, and writes nothing', async () => {
    const { storeId, key } = await storeWithKey(['catalog:write']);
    const api = client(key.token);
    for (const [body, field] of [
      [{ items: [] }, 'items'],
      [{ items: Array.from({ length: 101 }, (_, i) => product(`x-${i}`)) }, 'items'],
      [{ items: {} }, 'items'],
      [{}, 'items'],
      [{ items: [product('m')], mode: 'merge' }, 'mode'],
      [{ items: [product('m')], extra: true }, 'extra'],
    ] as const) {
      const res = await api.post(BATCH, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', field });
    }
    expect((await api.post(BATCH, 'not json')).status).toBe(400);
    expect(await productsOf(storeId)).toHaveLength(0);
  });

  it('answers 401 without a valid key and 403 naming catalog:write to a key without it', async () => {
    expect((await client(null).post(BATCH, { items: [product('a')] })).status).toBe(401);
    expect((await client('sia_wrong').post(BATCH, { items: [product('a')] })).status).toBe(401);
    const storeId = await createStore();
    const reader = await createKey(storeId, ['catalog:read']);
    const res = await client(reader.token).post(BATCH, { items: [product('a')] });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'forbidden' });
    expect(res.body.message).toContain('catalog:write');
    expect(await productsOf(storeId)).toHaveLength(0);
  });
});
