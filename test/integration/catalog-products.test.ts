import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape } from '#fixtures/api.ts';
import { adminChange } from '#fixtures/catalog.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const RW = ['catalog:read', 'catalog:write'] as const;
const q = (params: Record<string, string>) => new URLSearchParams(params).toString();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PUT and PATCH /catalog/products/{external_id}', () => {
  let storeId: string;
  /** A fresh writer (own key, own external ids, own allowance) per test. */
  const writer = async () => {
    const key = await createKey(storeId, RW);
    return { key, api: client(key.token) };
  };

  beforeAll(async () => {
    storeId = await createStore('EUR');
  });

  it('creates a product on the first PUT and answers with the mapped product (offers only with include=offers)', async () => {
    const { api } = await writer();
    const res = await api.put('/catalog/products/crm-1?include=offers', { name: 'Linen Shirt', price: 4900 });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.body).toEqual({
      data: {
        id: expect.any(Number),
        name: 'Linen Shirt',
        description: '',
        sku: null,
        thumbnail_url: null,
        quantity: 0,
        currency_code: 'EUR',
        min_price: 4900,
        max_price: 4900,
        weight: null,
        length: null,
        height: null,
        width: null,
        has_offers: false,
        is_archived: false,
        category_id: null,
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
        offers: [{ id: expect.any(Number), sku: null, price: 4900, quantity: 0, properties: [] }],
        external_id: 'crm-1',
        category_external_ids: [],
        tag_external_ids: [],
        checksum: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    });
    expect(res.body.data.created_at).toBe(res.body.data.updated_at);
  });

  it('leaves offers out of the PUT and PATCH answers unless include=offers, like the read shape', async () => {
    const { api } = await writer();
    const put = await api.put('/catalog/products/no-offers', { name: 'Plain', price: 100 });
    expect(put.status).toBe(200);
    expect(put.body.data).not.toHaveProperty('offers');
    expect(put.body.data).toMatchObject({ external_id: 'no-offers', category_external_ids: [], tag_external_ids: [] });
    const patch = await api.patch('/catalog/products/no-offers', { price: 200 });
    expect(patch.body.data).not.toHaveProperty('offers');
    expect(
      (await api.patch('/catalog/products/no-offers?include=offers', { price: 300 })).body.data.offers,
    ).toHaveLength(1);
    const bad = await api.put('/catalog/products/no-offers?include=variants', { name: 'Plain', price: 100 });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ code: 'validation_failed', field: 'include' });
  });

  it('stores every write field and shows the product at once on GET /products/{id}', async () => {
    const { api } = await writer();
    await api.put('/catalog/categories/shirts', { name: 'Shirts' });
    await api.put('/catalog/categories/summer', { name: 'Summer' });
    await api.put('/catalog/tags/new', { value: 'New' });
    const body = {
      name: 'Oxford Shirt',
      price: 5900,
      quantity: 7,
      sku: 'OX-1',
      description: 'Cotton.\n<b>not html</b>',
      status: 'draft',
      image_url: 'https://CDN.Example.com/img/ox.png',
      category_external_ids: ['summer', 'shirts'],
      tag_external_ids: ['new'],
    };
    const put = await api.put('/catalog/products/ox-1?include=offers', body);
    expect(put.status).toBe(200);
    const p = put.body.data;
    expect(p).toMatchObject({
      name: 'Oxford Shirt',
      min_price: 5900,
      quantity: 7,
      sku: 'OX-1',
      description: 'Cotton.\n<b>not html</b>',
      is_archived: true,
      // The normalized URL is stored: what was checked is what consumers fetch.
      thumbnail_url: 'https://cdn.example.com/img/ox.png',
      category_external_ids: ['summer', 'shirts'],
      tag_external_ids: ['new'],
    });
    const summer = (await api.put('/catalog/categories/summer', { name: 'Summer' })).body.data;
    expect(p.category_id).toBe(summer.id);

    const get = await api.get(`/products/${p.id}?include=offers`);
    expect(get.status).toBe(200);
    const { external_id: _x, category_external_ids: _c, tag_external_ids: _t, checksum: _s, ...readShape } = p;
    expect(get.body.data).toEqual(readShape);
  });

  it('replaces every write field on a later PUT: same id, omitted fields back to defaults, created_at kept', async () => {
    const { api } = await writer();
    await api.put('/catalog/categories/c', { name: 'C' });
    await api.put('/catalog/tags/t', { value: 'T' });
    const first = (
      await api.put('/catalog/products/rep', {
        name: 'Before',
        price: 100,
        quantity: 3,
        sku: 'REP-1',
        description: 'old',
        status: 'archived',
        image_url: 'https://img.example.com/a.png',
        category_external_ids: ['c'],
        tag_external_ids: ['t'],
      })
    ).body.data;
    await sleep(5);
    const res = await api.put('/catalog/products/rep', { name: 'After', price: 200 });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: first.id,
      name: 'After',
      min_price: 200,
      quantity: 0,
      sku: null,
      description: '',
      is_archived: false,
      thumbnail_url: null,
      category_id: null,
      category_external_ids: [],
      tag_external_ids: [],
      created_at: first.created_at,
    });
    expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));
  });

  it('writes nothing for a PUT that changes nothing (updated_at stays) and adds no product', async () => {
    const { api } = await writer();
    const body = { name: 'Same', price: 100, sku: 'SAME-1' };
    const first = (await api.put('/catalog/products/same', body)).body.data;
    const total = (await api.get('/products')).body.total;
    await sleep(5);
    const again = await api.put('/catalog/products/same', body);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first);
    expect((await api.get('/products')).body.total).toBe(total);
  });

  it('changes only the supplied fields on PATCH and keeps created_at', async () => {
    const { api } = await writer();
    await api.put('/catalog/tags/t1', { value: 'one' });
    const first = (
      await api.put('/catalog/products/pat', {
        name: 'Patch Me',
        price: 1000,
        quantity: 5,
        sku: 'PAT-1',
        description: 'keep me',
        image_url: 'https://img.example.com/p.png',
        tag_external_ids: ['t1'],
      })
    ).body.data;
    await sleep(5);
    const res = await api.patch('/catalog/products/pat', { price: 1500, status: 'draft' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: first.id,
      name: 'Patch Me',
      min_price: 1500,
      quantity: 5,
      sku: 'PAT-1',
      description: 'keep me',
      is_archived: true,
      thumbnail_url: 'https://img.example.com/p.png',
      tag_external_ids: ['t1'],
      created_at: first.created_at,
    });
    expect(Date.parse(res.body.data.updated_at)).toBeGreaterThan(Date.parse(first.updated_at));

    const cleared = await api.patch('/catalog/products/pat', { sku: null, image_url: null, tag_external_ids: [] });
    expect(cleared.body.data).toMatchObject({
      sku: null,
      thumbnail_url: null,
      tag_external_ids: [],
      min_price: 1500,
      name: 'Patch Me',
    });
  });

  it('answers an empty PATCH with the product unchanged (updated_at stays)', async () => {
    const { api } = await writer();
    const first = (await api.put('/catalog/products/empty-patch', { name: 'Quiet', price: 1 })).body.data;
    await sleep(5);
    for (const body of [{}, { name: 'Quiet' }]) {
      const res = await api.patch('/catalog/products/empty-patch', body);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(first);
    }
    // No body at all is not a JSON object: 400, and still nothing changes.
    expect((await api.patch('/catalog/products/empty-patch', undefined)).status).toBe(400);
    expect((await api.get('/products/' + first.id)).body.data.updated_at).toBe(first.updated_at);
  });

  it('keeps the variants of the store admin and the first variant’s other attributes on PUT and PATCH', async () => {
    const { api } = await writer();
    const created = (
      await api.put('/catalog/products/multi?include=offers', { name: 'Chair', price: 4900, quantity: 2, sku: 'CH-S' })
    ).body.data;
    // The store's own admin adds dimensions, properties and two more variants.
    await adminChange(storeId, created.id, (current) => ({
      ...current,
      offers: [
        {
          ...current.offers[0]!,
          weight: 4.5,
          length: 45,
          height: 90,
          width: 50,
          properties: [{ name: 'size', value: 'S' }],
        },
        {
          id: 900001,
          sku: 'CH-M',
          price: 5900,
          quantity: 4,
          properties: [{ name: 'size', value: 'M' }],
          weight: null,
          length: null,
          height: null,
          width: null,
        },
        {
          id: 900002,
          sku: 'CH-L',
          price: 3900,
          quantity: 5,
          properties: [{ name: 'size', value: 'L' }],
          weight: null,
          length: null,
          height: null,
          width: null,
        },
      ],
      updated_at: new Date().toISOString(),
    }));
    const put = await api.put('/catalog/products/multi?include=offers', {
      name: 'Chair',
      price: 5000,
      quantity: 1,
      sku: 'CH-S2',
    });
    expect(put.body.data).toMatchObject({
      has_offers: true,
      quantity: 10,
      min_price: 3900,
      max_price: 5900,
      sku: 'CH-S2',
      weight: 4.5,
      width: 50,
    });
    expect(put.body.data.offers).toEqual([
      { id: created.offers[0].id, sku: 'CH-S2', price: 5000, quantity: 1, properties: [{ name: 'size', value: 'S' }] },
      { id: 900001, sku: 'CH-M', price: 5900, quantity: 4, properties: [{ name: 'size', value: 'M' }] },
      { id: 900002, sku: 'CH-L', price: 3900, quantity: 5, properties: [{ name: 'size', value: 'L' }] },
    ]);
    const patch = await api.patch('/catalog/products/multi?include=offers', { price: 7000 });
    expect(patch.body.data).toMatchObject({ min_price: 3900, max_price: 7000, quantity: 10, sku: 'CH-S2' });
    expect(patch.body.data.offers.map((o: { id: number }) => o.id)).toEqual([created.offers[0].id, 900001, 900002]);
  });

  it('links categories and tags in the given order, category_id being the first; a list replaces the links', async () => {
    const { api } = await writer();
    const a = (await api.put('/catalog/categories/cat-a', { name: 'A' })).body.data;
    const b = (await api.put('/catalog/categories/cat-b', { name: 'B' })).body.data;
    await api.put('/catalog/tags/tag-a', { value: 'x' });
    await api.put('/catalog/tags/tag-b', { value: 'y' });
    const put = await api.put('/catalog/products/links', {
      name: 'Linked',
      price: 1,
      category_external_ids: ['cat-b', 'cat-a'],
      tag_external_ids: ['tag-a', 'tag-b'],
    });
    expect(put.body.data).toMatchObject({
      category_id: b.id,
      category_external_ids: ['cat-b', 'cat-a'],
      tag_external_ids: ['tag-a', 'tag-b'],
    });
    const patch = await api.patch('/catalog/products/links', { category_external_ids: ['cat-a'] });
    expect(patch.body.data).toMatchObject({
      category_id: a.id,
      category_external_ids: ['cat-a'],
      tag_external_ids: ['tag-a', 'tag-b'],
    });
    const none = await api.patch('/catalog/products/links', { category_external_ids: [] });
    expect(none.body.data).toMatchObject({ category_id: null, category_external_ids: [] });
    expect((await api.get(`/products/${put.body.data.id}`)).body.data.category_id).toBeNull();
    // Renaming a category keeps the links, which are by id.
    await api.patch('/catalog/products/links', { category_external_ids: ['cat-b'] });
    await api.put('/catalog/categories/cat-b', { name: 'B renamed' });
    expect((await api.get(`/products/${put.body.data.id}`)).body.data.category_id).toBe(b.id);
  });

  it('accepts an external id that the client percent-encoded', async () => {
    const { api } = await writer();
    const res = await api.put('/catalog/products/erp%3A42', { name: 'Encoded', price: 1 });
    expect(res.status).toBe(200);
    expect(res.body.data.external_id).toBe('erp:42');
    expect((await api.patch('/catalog/products/erp:42', { price: 2 })).body.data.id).toBe(res.body.data.id);
  });

  it('answers 404 to PATCH of an external id this key never PUT', async () => {
    const { api } = await writer();
    const res = await api.patch('/catalog/products/never-put', { price: 1 });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'not_found', message: expect.any(String), field: null });
    // Also when the body references categories that do not exist either: the product is the first thing missing.
    const both = await api.patch('/catalog/products/never-put', { category_external_ids: ['nope'] });
    expect(both.status).toBe(404);
  });
});

describe('written products in GET /products', () => {
  it('are listed and filtered at once: total +1, a renamed product under its new name only, a new SKU only under itself', async () => {
    const storeId = await createStore('USD');
    const api = client((await createKey(storeId, RW)).token);
    const before = (await api.get('/products')).body.total;
    expect(before).toBe(0);
    const created = (await api.put('/catalog/products/lamp', { name: 'Brass Desk Lamp', price: 12900, sku: 'LAMP-BR' }))
      .body.data;
    const list = await api.get('/products');
    expect(list.body.total).toBe(1);
    expect(list.body.data.map((p: { id: number }) => p.id)).toEqual([created.id]);
    expect((await api.get(`/products?${q({ 'filter[name]': 'desk lamp' })}`)).body.total).toBe(1);
    expect((await api.get(`/products?${q({ 'filter[sku]': 'LAMP-BR' })}`)).body.total).toBe(1);

    await api.patch('/catalog/products/lamp', { name: 'Copper Floor Light', sku: 'LIGHT-CU' });
    expect((await api.get(`/products?${q({ 'filter[name]': 'lamp' })}`)).body.total).toBe(0);
    expect((await api.get(`/products?${q({ 'filter[name]': 'BRASS' })}`)).body.total).toBe(0);
    const renamed = await api.get(`/products?${q({ 'filter[name]': 'floor light' })}`);
    expect(renamed.body.data.map((p: { id: number; name: string }) => [p.id, p.name])).toEqual([
      [created.id, 'Copper Floor Light'],
    ]);
    expect((await api.get(`/products?${q({ 'filter[sku]': 'LAMP-BR' })}`)).body.total).toBe(0);
    expect((await api.get(`/products?${q({ 'filter[sku]': 'LIGHT-CU' })}`)).body.total).toBe(1);

    // A replacing PUT moves both again; clearing the SKU leaves no SKU to find.
    await api.put('/catalog/products/lamp', { name: 'Reading Lamp', price: 12900 });
    expect((await api.get(`/products?${q({ 'filter[sku]': 'LIGHT-CU' })}`)).body.total).toBe(0);
    expect((await api.get(`/products?${q({ 'filter[name]': 'reading' })}`)).body.total).toBe(1);
    expect((await api.get(`/products?${q({ 'filter[name]': 'copper' })}`)).body.total).toBe(0);
    expect((await api.get('/products')).body.total).toBe(1);
    const one = await api.get(`/products/${created.id}`);
    expect(one.body.data).toMatchObject({ name: 'Reading Lamp', sku: null, currency_code: 'USD' });
  });
});

describe('key scoping', () => {
  it('gives two keys of one store separate external ids, products, categories and tags', async () => {
    const storeId = await createStore();
    const a = client((await createKey(storeId, RW)).token);
    const b = client((await createKey(storeId, RW)).token);
    await a.put('/catalog/categories/shared-cat', { name: 'A’s category' });
    await a.put('/catalog/tags/shared-tag', { value: 'A’s tag' });
    const pa = (
      await a.put('/catalog/products/same-xid', { name: 'From A', price: 1, category_external_ids: ['shared-cat'] })
    ).body.data;

    // B cannot see or change A's product through the same external id.
    expect((await b.patch('/catalog/products/same-xid', { name: 'Hijack' })).status).toBe(404);
    // B cannot reference A's category or tag.
    const cat = await b.put('/catalog/products/same-xid', {
      name: 'From B',
      price: 2,
      category_external_ids: ['shared-cat'],
    });
    expect(cat.status).toBe(422);
    expect(cat.body).toEqual({
      code: 'unknown_reference',
      message: expect.stringContaining('shared-cat'),
      field: 'category_external_ids[0]',
    });
    const tag = await b.put('/catalog/products/same-xid', {
      name: 'From B',
      price: 2,
      tag_external_ids: ['shared-tag'],
    });
    expect(tag.body).toMatchObject({ code: 'unknown_reference', field: 'tag_external_ids[0]' });
    expect((await b.get('/products')).body.total).toBe(1);

    // B's own PUT of the same external id is a different product.
    const pb = (await b.put('/catalog/products/same-xid', { name: 'From B', price: 2 })).body.data;
    expect(pb.id).not.toBe(pa.id);
    expect((await b.get('/products')).body.total).toBe(2);
    // And B's category of the same external id is B's own.
    const cb = (await b.put('/catalog/categories/shared-cat', { name: 'B’s category' })).body.data;
    const ca = (await a.put('/catalog/categories/shared-cat', { name: 'A’s category' })).body.data;
    expect(cb.id).not.toBe(ca.id);
    expect(ca.name).toBe('A’s category');
    expect((await a.get(`/products/${pa.id}`)).body.data).toMatchObject({ name: 'From A', category_id: ca.id });
  });
});

describe('authentication and abilities', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });
  const requests = [
    ['PUT', '/catalog/products/p1', { name: 'X', price: 1 }],
    ['PATCH', '/catalog/products/p1', { price: 1 }],
    ['PUT', '/catalog/categories/c1', { name: 'C' }],
    ['PUT', '/catalog/tags/t1', { value: 'T' }],
  ] as const;

  it.each(requests)('answers 401 to %s %s without a key or with an unknown one', async (method, path, body) => {
    for (const token of [null, 'not-a-real-key', 'sk_live_0000000000000000000000000000000000000000']) {
      const res = await client(token).request(method, path, body);
      expect(res.status).toBe(401);
      expectErrorShape(res.body);
      expect(res.body.code).toBe('unauthenticated');
    }
  });

  it.each(requests)(
    'answers 403 naming catalog:write to %s %s from a key without it, and writes nothing',
    async (method, path, body) => {
      const readOnly = client((await createKey(storeId, ['catalog:read', 'orders:read', 'content:write'])).token);
      const res = await readOnly.request(method, path, body);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 'forbidden', message: expect.stringContaining('catalog:write'), field: null });
      expect((await readOnly.get('/products')).body.total).toBe(0);
    },
  );

  it('answers 401 to a revoked key', async () => {
    const key = await createKey(storeId, RW);
    const api = client(key.token);
    expect((await api.put('/catalog/tags/r', { value: 'ok' })).status).toBe(200);
    const { adminCommand } = await import('#fixtures/api.ts');
    await adminCommand('keys revoke', { id: key.id });
    expect((await api.put('/catalog/tags/r', { value: 'ok' })).status).toBe(401);
  });
});
