import { describe, expect, it } from 'vitest';
import { client, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { nothingRaisedSince, numbered, snapshot } from '#fixtures/dry-run.ts';
import { idemKey, placeOrder, statusPath } from '#fixtures/orders.ts';
import { pageBody, pagePath, publishPath, xid } from '#fixtures/content.ts';

/**
 * Dry runs over real HTTP (docs/api.md#dry-runs): `?dry_run=true` answers what the write would do
 * and leaves every item of the store and the key, the event log and the Idempotency-Key as they were.
 */
const product = (name: string, price = 1000) => ({ name, price, sku: `SKU-${name}` });

describe('?dry_run=true on the HTTP writes', () => {
  it('PUT: would_create for a new product, then would_update with the changed fields, then unchanged; nothing written', async () => {
    const { storeId, key, client: api } = await storeWithKey();
    const before = await snapshot(storeId, key.id);
    const create = await api.put('/catalog/products/p-1?dry_run=true', product('Oak'));
    expect(create.status).toBe(200);
    expect(create.body).toMatchObject({ dry_run: true, result: 'would_create', changed_fields: [] });
    expect(create.body.data.name).toBe('Oak');
    expect(await snapshot(storeId, key.id)).toEqual(before);
    expect((await api.get('/catalog/products/p-1')).status).toBe(404);

    expect((await api.put('/catalog/products/p-1', product('Oak'))).status).toBe(200);
    const events = await numbered(storeId, 1);
    const written = await snapshot(storeId, key.id);

    const update = await api.put('/catalog/products/p-1?dry_run=true', product('Ash', 1200));
    expect(update.body).toMatchObject({ dry_run: true, result: 'would_update', data: { name: 'Ash' } });
    // The fields of the answer that would change (the mapped product shows prices as min_price/max_price).
    expect(update.body.changed_fields).toEqual(expect.arrayContaining(['name', 'min_price', 'max_price']));
    const patch = await api.patch('/catalog/products/p-1?dry_run=true', { description: 'New' });
    expect(patch.body).toMatchObject({ result: 'would_update', changed_fields: ['description'] });
    const same = await api.put('/catalog/products/p-1?dry_run=true', product('Oak'));
    expect(same.body).toMatchObject({ dry_run: true, result: 'unchanged', changed_fields: [] });

    expect(await snapshot(storeId, key.id)).toEqual(written);
    expect((await api.get('/catalog/products/p-1')).body.data.name).toBe('Oak');
    await nothingRaisedSince(storeId, events);
    const listed = await api.get('/events?limit=100');
    expect(listed.body.data.map((e: { type: string }) => e.type)).toEqual(['product.created', 'order.created']);
  });

  it('an invalid body or an unknown reference gives exactly the 422 of the real write', async () => {
    const { api, cases } = await (async () => {
      const { client: c } = await storeWithKey();
      return {
        api: c,
        cases: [
          ['/catalog/products/p-2', { price: 5 }],
          ['/catalog/products/p-2', { name: 'x', price: 5, category_external_ids: ['nope'] }],
          ['/catalog/categories/c-1', { name: '' }],
        ] as const,
      };
    })();
    for (const [path, body] of cases) {
      const dry = await api.put(`${path}?dry_run=true`, body);
      const real = await api.put(path, body);
      expect(dry.status).toBe(422);
      expectErrorShape(dry.body);
      expect(dry.body).toEqual(real.body);
      expect(dry.status).toBe(real.status);
    }
    // PATCH of an external id this key never wrote: the same 404.
    const dry404 = await api.patch('/catalog/products/ghost?dry_run=true', { name: 'x' });
    expect(dry404.status).toBe(404);
    expect(dry404.body).toEqual((await api.patch('/catalog/products/ghost', { name: 'x' })).body);
  });

  it('dry_run other than true or false is 422 naming dry_run, and nothing is written', async () => {
    const { storeId, key, client: api } = await storeWithKey();
    const before = await snapshot(storeId, key.id);
    const res = await api.put('/catalog/products/p-3?dry_run=yes', product('Elm'));
    expect(res.status).toBe(422);
    expect(res.body.field).toBe('dry_run');
    expect(await snapshot(storeId, key.id)).toEqual(before);
    const real = await api.put('/catalog/products/p-3?dry_run=false', product('Elm'));
    expect(real.status).toBe(200);
    expect(real.body.dry_run).toBeUndefined();
  });

  it('the batch: one plan per item, an item error as the real batch gives it, nothing written', async () => {
    const { storeId, key, client: api } = await storeWithKey();
    await api.put('/catalog/products/b-1', product('One'));
    await numbered(storeId, 1);
    const before = await snapshot(storeId, key.id);
    const items = [
      { external_id: 'b-1', ...product('One') },
      { external_id: 'b-2', ...product('Two') },
      { external_id: 'b-3', name: 'no price' },
      { external_id: 'b-1x', ...product('Three') },
    ];
    const res = await api.post('/catalog/products/batch?dry_run=true', { items });
    expect(res.status).toBe(200);
    expect(res.body.dry_run).toBe(true);
    expect(res.body.data.map((i: { result: string | null }) => i.result)).toEqual([
      'unchanged',
      'would_create',
      null,
      'would_create',
    ]);
    const real = await api.post('/catalog/products/batch', { items: [items[2]] });
    expect(res.body.data[2]).toEqual(real.body.data[0]);
    // The real batch above wrote nothing (its one item failed): the state is as before.
    expect(await snapshot(storeId, key.id)).toEqual(before);
    const updated = await api.post('/catalog/products/batch?dry_run=true', {
      items: [{ external_id: 'b-1', price: 2 }],
      mode: 'patch',
    });
    expect(updated.body.data[0]).toMatchObject({ result: 'would_update', changed_fields: ['min_price', 'max_price'] });
  });

  it('the batch: more creates than one insert transaction holds answer their plan, nothing written', async () => {
    const { storeId, key, client: api } = await storeWithKey();
    await api.put('/catalog/products/first', product('First'));
    await numbered(storeId, 1);
    const before = await snapshot(storeId, key.id);
    // The real batch would reserve a block of ids for them; the dry run numbers them from the
    // sequence as it stands, and moves nothing.
    const items = Array.from({ length: 25 }, (_, i) => ({ external_id: `many-${i}`, ...product(`Many ${i}`) }));
    const res = await api.post('/catalog/products/batch?dry_run=true', { items });
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: { result: string }) => i.result)).toEqual(Array(25).fill('would_create'));
    expect(res.body.data.map((i: { data: { id: number } }) => i.data.id)).toEqual(
      Array.from({ length: 25 }, (_, i) => i + 2),
    );
    expect(await snapshot(storeId, key.id)).toEqual(before);
  });

  it('order status: a dry run neither moves the order nor consumes the Idempotency-Key; the real call then does both', async () => {
    const { storeId, key, client: api } = await storeWithKey();
    const order = await placeOrder(storeId);
    const reference = order.reference as string;
    const k = idemKey();
    await numbered(storeId, 1);
    const before = await snapshot(storeId, key.id);
    const dry = await api.post(
      `${statusPath(reference)}?dry_run=true`,
      { status: 'processing' },
      { 'Idempotency-Key': k },
    );
    expect(dry.status).toBe(200);
    expect(dry.body).toMatchObject({
      dry_run: true,
      result: 'would_update',
      changed_fields: expect.arrayContaining(['status']),
    });
    expect(dry.body.data.status).toBe('processing');
    const bad = await api.post(
      `${statusPath(reference)}?dry_run=true`,
      { status: 'delivered' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(bad.status).toBe(409);
    expect(bad.body.code).toBe('invalid_transition');
    expect(await snapshot(storeId, key.id)).toEqual(before);
    const real = await api.post(statusPath(reference), { status: 'processing' }, { 'Idempotency-Key': k });
    expect(real.status).toBe(200);
    expect(real.headers.get('Idempotent-Replayed')).toBeNull();
    expect(real.body.data.status).toBe('processing');
    const again = await api.post(
      `${statusPath(reference)}?dry_run=true`,
      { status: 'processing' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(again.body).toMatchObject({ result: 'unchanged', changed_fields: [] });
  });

  it('pages: save and publish dry runs write nothing; an unchanged save says unchanged', async () => {
    const { storeId, key, client: api } = await storeWithKey();
    const id = xid();
    const body = pageBody();
    const empty = await snapshot(storeId, key.id);
    const dry = await api.put(`${pagePath(id)}?dry_run=true`, body);
    expect(dry.body).toMatchObject({ dry_run: true, result: 'would_create' });
    expect(await snapshot(storeId, key.id)).toEqual(empty);
    // Saving a page raises no event (publishing does), so nothing is numbered after it.
    expect((await api.put(pagePath(id), body)).status).toBe(200);
    const before = await snapshot(storeId, key.id);
    expect((await api.put(`${pagePath(id)}?dry_run=true`, body)).body.result).toBe('unchanged');
    const publish = await api.post(`${publishPath(id)}?dry_run=true`, undefined, { 'Idempotency-Key': idemKey() });
    expect(publish.body).toMatchObject({ result: 'would_update', data: { status: 'published' } });
    expect(await snapshot(storeId, key.id)).toEqual(before);
  });

  it('401 and 403 come before the dry run, as for the real write', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    expect((await client(null).put('/catalog/products/x?dry_run=true', product('x'))).status).toBe(401);
    const res = await client(key.token).put('/catalog/products/x?dry_run=true', product('x'));
    expect(res.status).toBe(403);
  });
});
