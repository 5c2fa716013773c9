import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { seedProduct } from '#fixtures/catalog.ts';

describe('GET /products and GET /products/{id}', () => {
  let api: ReturnType<typeof client>;
  let storeId: string;
  beforeAll(async () => {
    const s = await storeWithKey(['catalog:read']);
    api = s.client;
    storeId = s.storeId;
    // 23 products; #1 has three variants, #5 is archived, #7 a draft.
    await seedProduct(storeId, {
      name: 'Oak Dining Chair',
      offers: [
        {
          sku: 'CH-1-S',
          price: 4900,
          quantity: 3,
          weight: 4.5,
          length: 45,
          height: 90,
          width: 50,
          properties: [{ name: 'size', value: 'S' }],
        },
        { sku: 'CH-1-M', price: 5900, quantity: 4, properties: [{ name: 'size', value: 'M' }] },
        { sku: 'CH-1-L', price: 3900, quantity: 5, properties: [{ name: 'size', value: 'L' }] },
      ],
    });
    for (let i = 2; i <= 23; i++) {
      await seedProduct(storeId, {
        name: i % 2 === 0 ? `Walnut Table ${i}` : `LINEN cushion ${i}`,
        offers: [{ sku: `SKU-${i}`, price: 1000 * i, quantity: i }],
        status: i === 5 ? 'archived' : i === 7 ? 'draft' : 'active',
      });
    }
  });

  it('lists the first page with the default size of 15 and the full envelope', async () => {
    const res = await api.get('/products');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const b = res.body;
    expect(b).toMatchObject({
      current_page: 1,
      per_page: 15,
      total: 23,
      from: 1,
      to: 15,
      last_page: 2,
      prev_page_url: null,
    });
    expect(b.data).toHaveLength(15);
    expect(b.data.map((p: { id: number }) => p.id)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(b.path).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/integrations\/products$/);
    expect(b.next_page_url).toBe(`${b.path}?page=2`);
  });

  it('derives quantity, min and max price, sku and dimensions from the variants', async () => {
    const res = await api.get('/products/1');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: 1,
      name: 'Oak Dining Chair',
      description: '',
      sku: 'CH-1-S',
      thumbnail_url: null,
      quantity: 12,
      currency_code: 'EUR',
      min_price: 3900,
      max_price: 5900,
      weight: 4.5,
      length: 45,
      height: 90,
      width: 50,
      has_offers: true,
      is_archived: false,
      category_id: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    });
    expect(res.body.data).not.toHaveProperty('offers');
  });

  it('adds the variants with include=offers, on the list and on one product', async () => {
    const one = await api.get('/products/1?include=offers');
    expect(one.body.data.offers).toEqual([
      { id: expect.any(Number), sku: 'CH-1-S', price: 4900, quantity: 3, properties: [{ name: 'size', value: 'S' }] },
      { id: expect.any(Number), sku: 'CH-1-M', price: 5900, quantity: 4, properties: [{ name: 'size', value: 'M' }] },
      { id: expect.any(Number), sku: 'CH-1-L', price: 3900, quantity: 5, properties: [{ name: 'size', value: 'L' }] },
    ]);
    const list = await api.get('/products?limit=2&include=offers');
    expect(list.body.data[1].offers).toHaveLength(1);
    expect(list.body.data[1].has_offers).toBe(false);
    expect(list.body.next_page_url).toBe(`${list.body.path}?limit=2&include=offers&page=2`);
  });

  it('marks archived and draft products as archived', async () => {
    expect((await api.get('/products/5')).body.data.is_archived).toBe(true);
    expect((await api.get('/products/7')).body.data.is_archived).toBe(true);
    expect((await api.get('/products/6')).body.data.is_archived).toBe(false);
  });

  it('walks the pages to the end and answers past the last page with empty data', async () => {
    const last = await api.get('/products?page=2');
    expect(last.body).toMatchObject({
      current_page: 2,
      from: 16,
      to: 23,
      total: 23,
      last_page: 2,
      next_page_url: null,
    });
    expect(last.body.prev_page_url).toBe(`${last.body.path}?page=1`);
    const past = await api.get('/products?page=9&limit=10');
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({
      current_page: 9,
      data: [],
      from: null,
      to: null,
      last_page: 3,
      next_page_url: null,
    });
    const exact = await api.get('/products?limit=23');
    expect(exact.body).toMatchObject({ last_page: 1, to: 23, next_page_url: null });
  });

  it('filters by a case-insensitive part of the name, with total counting matches only', async () => {
    const res = await api.get('/products?filter%5Bname%5D=linen&limit=5');
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(11);
    expect(res.body.last_page).toBe(3);
    expect(res.body.data.every((p: { name: string }) => p.name.toLowerCase().includes('linen'))).toBe(true);
    expect(res.body.data.map((p: { id: number }) => p.id)).toEqual([3, 5, 7, 9, 11]);
    expect(res.body.next_page_url).toBe(`${res.body.path}?limit=5&filter%5Bname%5D=linen&page=2`);
    const page3 = await api.get('/products?filter%5Bname%5D=LINEN&limit=5&page=3');
    expect(page3.body.data.map((p: { id: number }) => p.id)).toEqual([23]);
    const none = await api.get('/products?filter%5Bname%5D=zebra');
    expect(none.body).toMatchObject({ total: 0, data: [], last_page: 1, from: null });
  });

  it('filters by the exact SKU of any variant', async () => {
    const second = await api.get('/products?filter%5Bsku%5D=CH-1-M');
    expect(second.body.total).toBe(1);
    expect(second.body.data[0].id).toBe(1);
    expect((await api.get('/products?filter%5Bsku%5D=CH-1')).body.total).toBe(0);
    expect((await api.get('/products?filter%5Bsku%5D=sku-4')).body.total).toBe(0);
    const both = await api.get('/products?filter%5Bsku%5D=SKU-4&filter%5Bname%5D=walnut');
    expect(both.body.data.map((p: { id: number }) => p.id)).toEqual([4]);
    const mismatch = await api.get('/products?filter%5Bsku%5D=SKU-4&filter%5Bname%5D=linen');
    expect(mismatch.body.total).toBe(0);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=51', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['include=variants', 'include'],
    ['filter%5Bcolor%5D=red', 'filter[color]'],
  ])('answers 422 for %s naming the field', async (query, field) => {
    const res = await api.get(`/products?${query}`);
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
  });

  it('answers 404 for an unknown or malformed id', async () => {
    for (const id of ['9999', '0', 'abc', '1.5']) {
      const res = await api.get(`/products/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'not_found', message: expect.any(String), field: null });
    }
  });

  it('never shows another store its products', async () => {
    const other = await storeWithKey(['catalog:read']);
    expect((await other.client.get('/products/1')).status).toBe(404);
    expect((await other.client.get('/products')).body).toMatchObject({ total: 0, data: [] });
  });

  it('answers 403 naming catalog:read to a key without it', async () => {
    const key = await createKey(storeId, ['orders:read', 'catalog:write']);
    for (const path of ['/products', '/products/1']) {
      const res = await client(key.token).get(path);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 'forbidden', message: expect.stringContaining('catalog:read'), field: null });
    }
  });
});
