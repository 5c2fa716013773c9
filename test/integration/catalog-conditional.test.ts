import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape, type ApiResponse } from '#fixtures/api.ts';

function expectError(res: ApiResponse, status: number, code: string, field?: string | null) {
  expect(res.status).toBe(status);
  expectErrorShape(res.body);
  expect(res.body.code).toBe(code);
  if (field !== undefined) expect(res.body.field).toBe(field);
}

type Api = ReturnType<typeof client>;
const path = (id: string) => `/catalog/products/${id}`;

/** If-Match / If-None-Match on product writes (docs/catalog-writes.md#conditional-writes). */
describe('conditional product writes', () => {
  let api: Api;
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
    api = client((await createKey(storeId, ['catalog:read', 'catalog:write'])).token);
  });

  it('answers the checksum, quoted, as ETag on GET, PUT and PATCH', async () => {
    const put = await api.put(path('cw-etag'), { name: 'Oak', price: 100 });
    expect(put.headers.get('etag')).toBe(`"${put.body.data.checksum}"`);
    const read = await api.get(path('cw-etag'));
    expect(read.headers.get('etag')).toBe(put.headers.get('etag'));
    const patched = await api.patch(path('cw-etag'), { price: 200 });
    expect(patched.headers.get('etag')).toBe(`"${patched.body.data.checksum}"`);
    expect(patched.headers.get('etag')).not.toBe(put.headers.get('etag'));
  });

  it('writes with the current ETag and refuses a stale one with 412, writing nothing', async () => {
    const first = await api.put(path('cw-match'), { name: 'Desk', price: 100 });
    const etag = first.headers.get('etag')!;
    const second = await api.put(path('cw-match'), { name: 'Desk', price: 150 }, { 'If-Match': etag });
    expect(second.status).toBe(200);
    expectError(
      await api.put(path('cw-match'), { name: 'Desk', price: 999 }, { 'If-Match': etag }),
      412,
      'precondition_failed',
      'If-Match',
    );
    expectError(
      await api.patch(path('cw-match'), { price: 999 }, { 'If-Match': etag }),
      412,
      'precondition_failed',
      'If-Match',
    );
    // A dry run answers what the write would: the same 412.
    expectError(
      await api.patch(`${path('cw-match')}?dry_run=true`, { price: 999 }, { 'If-Match': etag }),
      412,
      'precondition_failed',
      'If-Match',
    );
    const now = await api.get(path('cw-match'));
    expect(now.body.data).toEqual(second.body.data);
    // A list of tags matches any one; `*` matches whatever exists.
    const listed = await api.patch(
      path('cw-match'),
      { price: 160 },
      { 'If-Match': `"nope", ${now.headers.get('etag')}` },
    );
    expect(listed.status).toBe(200);
    expect((await api.patch(path('cw-match'), { price: 170 }, { 'If-Match': '*' })).status).toBe(200);
    // A weak tag never matches a strong comparison.
    expectError(
      await api.patch(
        path('cw-match'),
        { price: 180 },
        { 'If-Match': `W/"${(await api.get(path('cw-match'))).body.data.checksum}"` },
      ),
      412,
      'precondition_failed',
      'If-Match',
    );
  });

  it('refuses If-Match on a product that does not exist: PUT 412 creating nothing, PATCH 404 as without it', async () => {
    expectError(
      await api.put(path('cw-none'), { name: 'Lamp', price: 1 }, { 'If-Match': '*' }),
      412,
      'precondition_failed',
      'If-Match',
    );
    expectError(await api.get(path('cw-none')), 404, 'not_found');
    expectError(await api.patch(path('cw-none'), { price: 2 }, { 'If-Match': '"x"' }), 404, 'not_found');
  });

  it('creates only with If-None-Match: *, and refuses it with 412 once the product exists', async () => {
    const created = await api.put(path('cw-create'), { name: 'Stool', price: 10 }, { 'If-None-Match': '*' });
    expect(created.status).toBe(200);
    expectError(
      await api.put(path('cw-create'), { name: 'Stool', price: 20 }, { 'If-None-Match': '*' }),
      412,
      'precondition_failed',
      'If-None-Match',
    );
    expectError(
      await api.put(`${path('cw-create')}?dry_run=true`, { name: 'Stool', price: 20 }, { 'If-None-Match': '*' }),
      412,
      'precondition_failed',
      'If-None-Match',
    );
    expect((await api.get(path('cw-create'))).body.data).toEqual(created.body.data);
  });

  it('refuses a malformed If-Match or an If-None-Match other than * with 422 naming the header', async () => {
    await api.put(path('cw-bad'), { name: 'Rug', price: 1 });
    expectError(
      await api.put(path('cw-bad'), { name: 'Rug', price: 2 }, { 'If-Match': 'not-quoted' }),
      422,
      'validation_failed',
      'If-Match',
    );
    expectError(
      await api.put(path('cw-bad'), { name: 'Rug', price: 2 }, { 'If-None-Match': '"abc"' }),
      422,
      'validation_failed',
      'If-None-Match',
    );
    expect((await api.get(path('cw-bad'))).body.data.min_price).toBe(1);
  });

  it('checks the key before the condition: 401 without a key, 403 without catalog:write', async () => {
    const reader = client((await createKey(storeId, ['catalog:read'])).token);
    expectError(await reader.put(path('cw-auth'), { name: 'X', price: 1 }, { 'If-None-Match': '*' }), 403, 'forbidden');
    expectError(await client(null).patch(path('cw-auth'), { price: 1 }, { 'If-Match': '"x"' }), 401, 'unauthenticated');
  });
});
