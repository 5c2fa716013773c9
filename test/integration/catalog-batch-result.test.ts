import { describe, expect, it } from 'vitest';
import { client, storeWithKey } from '#fixtures/api.ts';

/**
 * Each batch item says what its write did (docs/api.md, batch): `created`, `updated`, or
 * `unchanged`, which raised no event, so a syncing client can tell the three apart. Which events
 * a batch raises is the use case's, tested in-process (test/usecase/product-batch.test.ts).
 */
const BATCH = '/catalog/products/batch';
const product = (xid: string, price: number) => ({ external_id: xid, name: `Product ${xid}`, price });
type Item = { external_id: string; status: number; result: string | null };

describe('POST /catalog/products/batch item result', () => {
  it('answers created, updated and unchanged in one batch', async () => {
    const { key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const api = client(key.token);
    const first = await api.post(BATCH, { items: [product('keep', 100), product('change', 100)] });
    expect(first.status).toBe(200);
    expect(first.body.data.map((i: Item) => i.result)).toEqual(['created', 'created']);

    const items = [product('keep', 100), product('change', 250), product('new', 100), product('bad', -1)];
    const mixed = await api.post(BATCH, { items });
    expect(mixed.status).toBe(200);
    expect(mixed.body.data.map((i: Item) => [i.external_id, i.status, i.result])).toEqual([
      ['keep', 200, 'unchanged'],
      ['change', 200, 'updated'],
      ['new', 200, 'created'],
      ['bad', 422, null],
    ]);
    expect(mixed.body.data[1].data.min_price).toBe(250);

    // The same batch again (a client retrying after a lost answer) changes nothing at all.
    const again = await api.post(BATCH, { items });
    expect(again.status).toBe(200);
    expect(again.body.data.map((i: Item) => i.result)).toEqual(['unchanged', 'unchanged', 'unchanged', null]);
    expect(again.body.data.slice(0, 3).map((i: { data: unknown }) => i.data)).toEqual(
      mixed.body.data.slice(0, 3).map((i: { data: unknown }) => i.data),
    );
  });

  it('a patch batch answers updated or unchanged, and an unknown external id is 404 with no result', async () => {
    const { key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const api = client(key.token);
    expect((await api.post(BATCH, { items: [product('p1', 100), product('p2', 100)] })).status).toBe(200);
    const res = await api.post(BATCH, {
      mode: 'patch',
      items: [
        { external_id: 'p1', price: 100 },
        { external_id: 'p2', price: 300 },
        { external_id: 'p3', price: 100 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: Item) => [i.status, i.result])).toEqual([
      [200, 'unchanged'],
      [200, 'updated'],
      [404, null],
    ]);
  });

  it("answers an item that is not an object or lacks a valid external id as that item's 422, and a repeated external id as the request's", async () => {
    const { key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const api = client(key.token);
    const res = await api.post(BATCH, { items: [42, { name: 'x', price: 1 }, product('fine', 100)] });
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: { status: number; error: unknown }) => [i.status, i.error])).toEqual([
      [422, { code: 'validation_failed', message: 'each item must be a JSON object', field: null }],
      [
        422,
        {
          code: 'validation_failed',
          message: 'external_id must be 1-128 characters of A-Z a-z 0-9 . _ : -',
          field: 'external_id',
        },
      ],
      [200, null],
    ]);
    const repeated = await api.post(BATCH, { items: [product('twice', 1), product('once', 1), product('twice', 2)] });
    expect(repeated.status).toBe(422);
    expect(repeated.body).toEqual({
      code: 'validation_failed',
      message: 'items[2].external_id repeats twice; each product may appear once per batch',
      field: 'items[2].external_id',
    });
    // Refused as a whole: neither of its products was written.
    expect((await api.get('/catalog/products/once')).status).toBe(404);
  });
});
