import { beforeAll, describe, expect, it } from 'vitest';
import { baseUrl, client, createKey, createStore, expectErrorShape, type ApiResponse } from '#fixtures/api.ts';

function expectError(res: ApiResponse, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  expectErrorShape(res.body);
  expect(res.body.code).toBe(code);
  if (field !== undefined) expect(res.body.field).toBe(field);
}

/** GET /catalog/products/{external_id}: a syncing client reads back what it wrote, by its own id. */
describe('GET /catalog/products/{external_id}', () => {
  let storeId: string;
  let api: ReturnType<typeof client>;
  let token: string;
  beforeAll(async () => {
    storeId = await createStore();
    token = (await createKey(storeId, ['catalog:read', 'catalog:write'])).token;
    api = client(token);
    await api.put('/catalog/categories/rb-cat', { name: 'Chairs' });
    await api.put('/catalog/tags/rb-tag', { value: 'oak' });
  });

  it('answers the mapped product exactly as the PUT and PATCH that wrote it answered', async () => {
    const put = await api.put('/catalog/products/rb-1', {
      name: 'Oak chair',
      price: 4900,
      sku: 'RB-1',
      category_external_ids: ['rb-cat'],
      tag_external_ids: ['rb-tag'],
    });
    expect(put.status).toBe(200);
    const read = await api.get('/catalog/products/rb-1');
    expect(read.status).toBe(200);
    expect(read.body).toEqual(put.body);
    expect(read.body.data).toMatchObject({
      external_id: 'rb-1',
      category_external_ids: ['rb-cat'],
      tag_external_ids: ['rb-tag'],
      sku: 'RB-1',
    });
    const patched = await api.patch('/catalog/products/rb-1', { quantity: 7 });
    const again = await api.get('/catalog/products/rb-1');
    expect(again.body).toEqual(patched.body);
    expect(again.body.data.quantity).toBe(7);
  });

  it('adds the variants with include=offers, as GET /products/{id} does', async () => {
    await api.put('/catalog/products/rb-2', { name: 'Stool', price: 1200, sku: 'RB-2', quantity: 3 });
    const read = await api.get('/catalog/products/rb-2?include=offers');
    expect(read.status).toBe(200);
    const byId = await api.get(`/products/${read.body.data.id}?include=offers`);
    expect(read.body.data.offers).toEqual(byId.body.data.offers);
    expect(read.body.data.offers).toHaveLength(1);
  });

  it("answers HEAD with the GET answer's status and no body", async () => {
    await api.put('/catalog/products/rb-head', { name: 'Bench', price: 100 });
    // HEAD is not an operation of the document (it says HEAD works wherever GET does): plain fetch.
    const head = await fetch(`${baseUrl()}/catalog/products/rb-head`, {
      method: 'HEAD',
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it("answers 404 for an external id this key never wrote, and for another key's external id of the same store", async () => {
    expectError(await api.get('/catalog/products/never-written'), 404, 'not_found');
    const other = client((await createKey(storeId, ['catalog:read', 'catalog:write'])).token);
    expect((await other.put('/catalog/products/theirs-1', { name: 'Theirs', price: 1 })).status).toBe(200);
    expectError(await api.get('/catalog/products/theirs-1'), 404, 'not_found');
    expect((await other.get('/catalog/products/theirs-1')).status).toBe(200);
  });

  it('answers an unknown external id with the 404 body naming external_id, and GET /products/{id} one naming no field', async () => {
    const res = await api.get('/catalog/products/never-written-either');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'not_found', message: 'The product does not exist.', field: 'external_id' });
    const byId = await api.get('/products/999999999');
    expect(byId.status).toBe(404);
    expect(byId.body).toEqual({ code: 'not_found', message: 'The product does not exist.', field: null });
  });

  it('answers 422 naming external_id for an id outside the allowed characters', async () => {
    expectError(
      await api.get(`/catalog/products/${encodeURIComponent('bad id!')}`),
      422,
      'validation_failed',
      'external_id',
    );
  });

  it('answers 422 naming include for an unknown include', async () => {
    await api.put('/catalog/products/rb-3', { name: 'Lamp', price: 1 });
    expectError(await api.get('/catalog/products/rb-3?include=everything'), 422, 'validation_failed', 'include');
  });

  it('answers 403 to a key without catalog:read, even one that may write, and 401 without a key', async () => {
    const writer = client((await createKey(storeId, ['catalog:write'])).token);
    expect((await writer.put('/catalog/products/w-1', { name: 'W', price: 1 })).status).toBe(200);
    const refused = await writer.get('/catalog/products/w-1');
    expectError(refused, 403, 'forbidden');
    expect(refused.body.message).toContain('catalog:read');
    expectError(await client(null).get('/catalog/products/w-1'), 401, 'unauthenticated');
  });
});
