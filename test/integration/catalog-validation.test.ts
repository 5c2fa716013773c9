import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape } from '#fixtures/api.ts';
import { keyPool } from '#fixtures/key-pool.ts';

const RW = ['catalog:read', 'catalog:write'] as const;
const valid = { name: 'Valid', price: 100 };
const ids = (n: number, prefix = 'x') => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

/** [what, body, field] — every rule of docs/contract.md#limits, docs/contract.md#products with the field it must name. */
const putCases: Array<[string, Record<string, unknown>, string]> = [
  ['name missing', { price: 1 }, 'name'],
  ['price missing', { name: 'X' }, 'price'],
  ['name empty', { ...valid, name: '' }, 'name'],
  ['name blank', { ...valid, name: '   ' }, 'name'],
  ['name of 256 characters', { ...valid, name: 'n'.repeat(256) }, 'name'],
  ['name not a string', { ...valid, name: 42 }, 'name'],
  ['name null', { ...valid, name: null }, 'name'],
  ['price negative', { ...valid, price: -1 }, 'price'],
  ['price fractional', { ...valid, price: 10.5 }, 'price'],
  ['price as a string', { ...valid, price: '100' }, 'price'],
  ['price over 10^12', { ...valid, price: 1_000_000_000_001 }, 'price'],
  ['price null', { ...valid, price: null }, 'price'],
  ['quantity negative', { ...valid, quantity: -1 }, 'quantity'],
  ['quantity fractional', { ...valid, quantity: 0.5 }, 'quantity'],
  ['quantity as a string', { ...valid, quantity: '3' }, 'quantity'],
  ['quantity null', { ...valid, quantity: null }, 'quantity'],
  ['quantity over 2^53', { ...valid, quantity: 2 ** 53 }, 'quantity'],
  ['sku of 65 characters', { ...valid, sku: 's'.repeat(65) }, 'sku'],
  ['sku a number', { ...valid, sku: 12 }, 'sku'],
  ['description of 65,536 characters', { ...valid, description: 'd'.repeat(65_536) }, 'description'],
  ['description null', { ...valid, description: null }, 'description'],
  ['description a number', { ...valid, description: 5 }, 'description'],
  ['status unknown', { ...valid, status: 'published' }, 'status'],
  ['status in capitals', { ...valid, status: 'ACTIVE' }, 'status'],
  ['status null', { ...valid, status: null }, 'status'],
  ['image_url a number', { ...valid, image_url: 5 }, 'image_url'],
  ['category_external_ids not an array', { ...valid, category_external_ids: 'c1' }, 'category_external_ids'],
  ['category_external_ids null', { ...valid, category_external_ids: null }, 'category_external_ids'],
  ['category_external_ids with a number', { ...valid, category_external_ids: [1] }, 'category_external_ids[0]'],
  [
    'category_external_ids with a space',
    { ...valid, category_external_ids: ['ok', 'bad id'] },
    'category_external_ids[1]',
  ],
  ['category_external_ids with an empty id', { ...valid, category_external_ids: [''] }, 'category_external_ids[0]'],
  [
    'category_external_ids with a 129-character id',
    { ...valid, category_external_ids: ['c'.repeat(129)] },
    'category_external_ids[0]',
  ],
  [
    'category_external_ids with a duplicate',
    { ...valid, category_external_ids: ['a', 'b', 'a'] },
    'category_external_ids[2]',
  ],
  ['category_external_ids of 51', { ...valid, category_external_ids: ids(51) }, 'category_external_ids'],
  ['tag_external_ids with a duplicate', { ...valid, tag_external_ids: ['t', 't'] }, 'tag_external_ids[1]'],
  ['tag_external_ids with a slash', { ...valid, tag_external_ids: ['a/b'] }, 'tag_external_ids[0]'],
  ['tag_external_ids of 51', { ...valid, tag_external_ids: ids(51) }, 'tag_external_ids'],
  ['an unknown field', { ...valid, color: 'red' }, 'color'],
  ['a read-shape field', { ...valid, min_price: 1 }, 'min_price'],
  ['id in the body', { ...valid, id: 1 }, 'id'],
  ['external_id in the body', { ...valid, external_id: 'other' }, 'external_id'],
  ['category_id in the body', { ...valid, category_id: 1 }, 'category_id'],
];

const patchCases: Array<[string, Record<string, unknown>, string]> = [
  ['name null', { name: null }, 'name'],
  ['name empty', { name: '' }, 'name'],
  ['price null', { price: null }, 'price'],
  ['price negative', { price: -5 }, 'price'],
  ['quantity fractional', { quantity: 1.25 }, 'quantity'],
  ['status unknown', { status: 'deleted' }, 'status'],
  ['description null', { description: null }, 'description'],
  ['tag_external_ids with a duplicate', { tag_external_ids: ['a', 'b', 'c', 'b'] }, 'tag_external_ids[3]'],
  ['category_external_ids null', { category_external_ids: null }, 'category_external_ids'],
  ['an unknown field', { stock: 4 }, 'stock'],
  ['offers in the body', { offers: [] }, 'offers'],
];

describe('product write validation', () => {
  let storeId: string;
  let pool: ReturnType<typeof keyPool>;
  beforeAll(async () => {
    storeId = await createStore();
    pool = keyPool(storeId, RW, 55);
  });

  it.each(putCases)('PUT answers 422 validation_failed for %s, naming %s', async (_what, body, field) => {
    const api = await pool();
    const res = await api.put('/catalog/products/v-1', body);
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
  });

  it.each(patchCases)('PATCH answers 422 validation_failed for %s, naming %s', async (_what, body, field) => {
    const api = await pool();
    const res = await api.patch('/catalog/products/v-1', body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
  });

  it('names the unknown field in the message', async () => {
    const res = await (await pool()).put('/catalog/products/v-1', { ...valid, colour: 'red' });
    expect(res.body).toEqual({ code: 'validation_failed', message: 'colour is not a known field', field: 'colour' });
  });

  it('accepts the bounds themselves: 255-character names (emoji count as one), price 0 and 10^12, 50 ids, 65,535-character descriptions', async () => {
    const key = await createKey(storeId, RW);
    const api = client(key.token);
    for (const x of ids(50, 'c')) await api.put(`/catalog/categories/${x}`, { name: x });
    const res = await api.put('/catalog/products/bounds', {
      name: '🪑'.repeat(255),
      price: 1_000_000_000_000,
      quantity: Number.MAX_SAFE_INTEGER,
      sku: 's'.repeat(64),
      description: 'd'.repeat(65_535),
      category_external_ids: ids(50, 'c'),
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ min_price: 1_000_000_000_000, category_external_ids: ids(50, 'c') });
    expect([...res.body.data.name]).toHaveLength(255);
    const zero = await api.patch('/catalog/products/bounds', { price: 0, sku: '' });
    // An empty SKU is "no SKU".
    expect(zero.body.data).toMatchObject({ min_price: 0, sku: null });
  });

  it.each([
    ['a space', 'bad%20id'],
    ['129 characters', 'x'.repeat(129)],
    ['a star', 'a*b'],
    ['a non-ASCII letter', '%C3%BC'],
    ['an encoded slash', 'a%2Fb'],
  ])('answers 422 naming external_id for a path id with %s, on every catalog PUT and PATCH', async (_what, xid) => {
    const api = await pool(4);
    for (const [method, path, body] of [
      ['PUT', `/catalog/products/${xid}`, valid],
      ['PATCH', `/catalog/products/${xid}`, { price: 1 }],
      ['PUT', `/catalog/categories/${xid}`, { name: 'C' }],
      ['PUT', `/catalog/tags/${xid}`, { value: 'T' }],
    ] as const) {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', field: 'external_id' });
    }
  });

  it('answers 400 invalid_json to a body that is not a JSON object', async () => {
    const api = await pool(4);
    for (const body of ['{"name":', '[1,2]', '"text"', 'null']) {
      const res = await api.request('PUT', '/catalog/products/v-json', body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_json' });
    }
  });

  it('answers 422 unknown_reference naming the first unknown element, categories before tags', async () => {
    const key = await createKey(storeId, RW);
    const api = client(key.token);
    await api.put('/catalog/categories/known', { name: 'Known' });
    await api.put('/catalog/tags/known', { value: 'known' });
    const cat = await api.put('/catalog/products/refs', {
      ...valid,
      category_external_ids: ['known', 'missing-1', 'missing-2'],
      tag_external_ids: ['missing'],
    });
    expect(cat.status).toBe(422);
    expect(cat.body).toEqual({
      code: 'unknown_reference',
      message: expect.stringContaining('missing-1'),
      field: 'category_external_ids[1]',
    });
    const tag = await api.put('/catalog/products/refs', {
      ...valid,
      category_external_ids: ['known'],
      tag_external_ids: ['known', 'nope'],
    });
    expect(tag.body).toMatchObject({ code: 'unknown_reference', field: 'tag_external_ids[1]' });
    // A tag's external id is not a category's, and the other way round.
    const crossed = await api.put('/catalog/products/refs', {
      ...valid,
      category_external_ids: ['known'],
      tag_external_ids: ['known'],
    });
    expect(crossed.status).toBe(200);
    const patch = await api.patch('/catalog/products/refs', { tag_external_ids: ['ghost'] });
    expect(patch.body).toMatchObject({ code: 'unknown_reference', field: 'tag_external_ids[0]' });
  });
});

describe('nothing changes on any error', () => {
  it('leaves an existing product, the list and the filters exactly as they were after every kind of refused write', async () => {
    const storeId = await createStore();
    const api = client((await createKey(storeId, RW)).token);
    await api.put('/catalog/categories/c1', { name: 'C1' });
    const original = (
      await api.put('/catalog/products/stable?include=offers', {
        name: 'Stable Product',
        price: 500,
        sku: 'STABLE',
        category_external_ids: ['c1'],
      })
    ).body.data;
    const refused = [
      // Valid changes next to one bad field: none of them may land.
      ['PUT', { name: 'Changed', price: 1, sku: 'CHANGED', category_external_ids: ['c1', 'ghost'] }, 422],
      ['PUT', { name: 'Changed', price: 1, tag_external_ids: ['ghost'] }, 422],
      ['PUT', { name: 'Changed', price: 1, image_url: 'https://169.254.169.254/latest/meta-data' }, 422],
      ['PUT', { name: 'Changed', price: -1 }, 422],
      ['PUT', { name: 'Changed', price: 1, extra: true }, 422],
      ['PATCH', { name: 'Changed', sku: 'CHANGED', category_external_ids: ['ghost'] }, 422],
      ['PATCH', { name: 'Changed', image_url: 'http://cdn.example.com/a.png' }, 422],
      ['PATCH', { name: 'Changed', quantity: -1 }, 422],
      ['PATCH', { name: 'Changed', status: 'paid' }, 422],
    ] as const;
    for (const [method, body, status] of refused) {
      const res = await api.request(method, '/catalog/products/stable', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
    }
    // A refused first PUT creates nothing: no product, no external-id mapping.
    expect(
      (await api.put('/catalog/products/never', { name: 'Never', price: 1, category_external_ids: ['ghost'] })).status,
    ).toBe(422);
    expect((await api.patch('/catalog/products/never', { price: 2 })).status).toBe(404);

    const after = await api.get(`/products/${original.id}?include=offers`);
    const { external_id: _x, category_external_ids: _c, tag_external_ids: _t, checksum: _s, ...readShape } = original;
    expect(after.body.data).toEqual(readShape);
    expect((await api.get('/products')).body.total).toBe(1);
    expect((await api.get('/products?filter%5Bname%5D=changed')).body.total).toBe(0);
    expect((await api.get('/products?filter%5Bsku%5D=CHANGED')).body.total).toBe(0);
    expect((await api.get('/products?filter%5Bsku%5D=STABLE')).body.total).toBe(1);
  });
});

describe('image_url', () => {
  let storeId: string;
  let pool: ReturnType<typeof keyPool>;
  beforeAll(async () => {
    storeId = await createStore();
    pool = keyPool(storeId, RW, 55);
  });

  // The nastiest of the unit-tested payloads, through the real endpoint.
  const ssrf = [
    'http://cdn.example.com/a.png',
    'https://127.0.0.1/a.png',
    'https://2130706433/a.png',
    'https://0x7f000001/a.png',
    'https://0177.0.0.1/a.png',
    'https://0x7f.1/a.png',
    'https://127.1/a.png',
    'https://0/a.png',
    'https://169.254.169.254/latest/meta-data/',
    'https://[::1]/a.png',
    'https://[::ffff:127.0.0.1]/a.png',
    'https://[::ffff:a9fe:a9fe]/a.png',
    'https://[0:0:0:0:0:ffff:7f00:1]/a.png',
    'https://[fd00:ec2::254]/a.png',
    'https://10.0.0.1/a.png',
    'https://100.64.0.1/a.png',
    'https://①②⑦.⓪.⓪.①/a.png',
    'https://localhost/a.png',
    'https://LOCALHOST./a.png',
    'https://metadata.google.internal/computeMetadata/v1/',
    'https://instance-data.ec2.internal/latest/',
    'https://user:pass@cdn.example.com/a.png',
    'https://cdn.example.com@127.0.0.1/a.png',
    'https://cdn.example.com:8443/a.png',
    'https://cdn.example.com:80/a.png',
    'https://intranet/a.png',
    'https://127.0.0.1.nip.io/a.png',
    'https://app.localtest.me/a.png',
    'https://printer.local/a.png',
    'file:///etc/passwd',
    'javascript:alert(1)',
    '//cdn.example.com/a.png',
    'https://cdn.example.com/a\n.png',
    'https://93.184.216.34/a.png',
  ];

  it.each(ssrf)('refuses %s with 422 invalid_image_url naming image_url, on PUT and PATCH', async (url) => {
    const api = await pool(2);
    const put = await api.put('/catalog/products/img', { ...valid, image_url: url });
    expect(put.status).toBe(422);
    expect(put.body).toEqual({
      code: 'invalid_image_url',
      message: expect.stringMatching(/image_url/),
      field: 'image_url',
    });
    const patch = await api.patch('/catalog/products/img', { image_url: url });
    // PATCH on an unknown product is 404, but only after the body is valid: the URL is refused first.
    expect(patch.status).toBe(422);
    expect(patch.body).toMatchObject({ code: 'invalid_image_url', field: 'image_url' });
  });

  it.each([
    ['https://cdn.example.com/images/chair.png?w=400', 'https://cdn.example.com/images/chair.png?w=400'],
    ['https://CDN.Example.COM:443/a.png', 'https://cdn.example.com/a.png'],
    ['https://images.shop.example.org/p/1', 'https://images.shop.example.org/p/1'],
    ['https://bücher.example/a.png', 'https://xn--bcher-kva.example/a.png'],
  ])('accepts %s and stores it as %s', async (input, stored) => {
    const api = await pool();
    const res = await api.put('/catalog/products/img-ok', { ...valid, image_url: input });
    expect(res.status).toBe(200);
    expect(res.body.data.thumbnail_url).toBe(stored);
  });
});
