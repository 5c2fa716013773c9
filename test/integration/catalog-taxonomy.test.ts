import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape } from '#fixtures/api.ts';
import { keyPool } from '#fixtures/key-pool.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const RW = ['catalog:read', 'catalog:write'] as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PUT /catalog/categories/{external_id}', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });

  it('creates, then renames the same category; created_at stays, updated_at moves, the same name writes nothing', async () => {
    const api = client((await createKey(storeId, RW)).token);
    const created = await api.put('/catalog/categories/chairs', { name: 'Chairs' });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      data: {
        id: expect.any(Number),
        external_id: 'chairs',
        name: 'Chairs',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      },
    });
    await sleep(5);
    const same = await api.put('/catalog/categories/chairs', { name: 'Chairs' });
    expect(same.body).toEqual(created.body);
    const renamed = await api.put('/catalog/categories/chairs', { name: 'Seating' });
    expect(renamed.body.data).toMatchObject({
      id: created.body.data.id,
      external_id: 'chairs',
      name: 'Seating',
      created_at: created.body.data.created_at,
    });
    expect(Date.parse(renamed.body.data.updated_at)).toBeGreaterThan(Date.parse(created.body.data.updated_at));
    const other = await api.put('/catalog/categories/tables', { name: 'Seating' });
    expect(other.body.data.id).not.toBe(created.body.data.id);
  });

  it.each([
    ['name missing', {}, 'name'],
    ['name empty', { name: '' }, 'name'],
    ['name blank', { name: ' \t ' }, 'name'],
    ['name of 256 characters', { name: 'n'.repeat(256) }, 'name'],
    ['name a number', { name: 3 }, 'name'],
    ['name null', { name: null }, 'name'],
    ['an unknown field', { name: 'X', parent: 'root' }, 'parent'],
    ['a tag body', { value: 'X' }, 'name'],
  ])('answers 422 validation_failed for %s, naming %s', async (_what, body, field) => {
    const api = client((await createKey(storeId, RW)).token);
    const res = await api.put('/catalog/categories/bad', body);
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
    // Nothing was created: a product cannot reference it.
    const ref = await api.put('/catalog/products/p', { name: 'P', price: 1, category_external_ids: ['bad'] });
    expect(ref.body).toMatchObject({ code: 'unknown_reference', field: 'category_external_ids[0]' });
  });
});

describe('PUT /catalog/tags/{external_id}', () => {
  let storeId: string;
  let pool: ReturnType<typeof keyPool>;
  beforeAll(async () => {
    storeId = await createStore();
    pool = keyPool(storeId, RW, 55);
  });

  it('creates and renames a tag', async () => {
    const api = client((await createKey(storeId, RW)).token);
    const created = await api.put('/catalog/tags/sale', { value: 'Sale' });
    expect(created.body).toEqual({
      data: {
        id: expect.any(Number),
        external_id: 'sale',
        value: 'Sale',
        created_at: expect.stringMatching(ISO_MS),
        updated_at: expect.stringMatching(ISO_MS),
      },
    });
    await sleep(5);
    const renamed = await api.put('/catalog/tags/sale', { value: 'Clearance' });
    expect(renamed.body.data).toMatchObject({
      id: created.body.data.id,
      value: 'Clearance',
      created_at: created.body.data.created_at,
    });
    expect(renamed.body.data.updated_at > created.body.data.updated_at).toBe(true);
  });

  const reserved = [
    'pending',
    'paid',
    'processing',
    'shipped',
    'delivered',
    'cancelled',
    'returned',
    'active',
    'draft',
    'archived',
    'published',
    'unpublished',
    'PAID',
    ' Paid ',
    'Shipped\t',
    '\nDraft\n',
    '\u00a0active\u00a0',
    'ＰＡＩＤ',
    'pa\u200bid',
    '\ufeffArchived',
    'UnPublished',
  ];
  it.each(reserved)('refuses the status label %j with 422 reserved_tag_value naming value', async (value) => {
    const api = await pool();
    const res = await api.put('/catalog/tags/status', { value });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      code: 'reserved_tag_value',
      message: expect.stringContaining('status label'),
      field: 'value',
    });
  });

  it('refuses renaming an existing tag to a status label and keeps the old value', async () => {
    const api = client((await createKey(storeId, RW)).token);
    const created = (await api.put('/catalog/tags/t', { value: 'fine' })).body.data;
    expect((await api.put('/catalog/tags/t', { value: 'Delivered' })).status).toBe(422);
    expect((await api.put('/catalog/tags/t', { value: 'fine' })).body.data).toEqual(created);
  });

  it.each(['paid in full', 'unpaid', 'pending review', 'pre-order', 'drafty', 'activewear', 'cancelled-2024'])(
    'accepts %j, which only contains a status word',
    async (value) => {
      const api = await pool();
      const res = await api.put(`/catalog/tags/ok-${Math.random().toString(36).slice(2)}`, { value });
      expect(res.status).toBe(200);
      expect(res.body.data.value).toBe(value);
    },
  );

  it.each([
    ['value missing', {}, 'value'],
    ['value empty', { value: '' }, 'value'],
    ['value of 256 characters', { value: 'v'.repeat(256) }, 'value'],
    ['value a boolean', { value: true }, 'value'],
    ['a category body', { name: 'X' }, 'value'],
    ['an unknown field', { value: 'X', color: 'red' }, 'color'],
  ])('answers 422 validation_failed for %s, naming %s', async (_what, body, field) => {
    const res = await (await pool()).put('/catalog/tags/bad', body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
  });
});
