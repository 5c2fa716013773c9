import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { client, createKey, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { waitFor } from '#fixtures/webhooks.ts';

/** POST /catalog/products/{external_id}/stock (docs/catalog-writes.md#stock-deltas) through the local gateway. */
const xid = () => `stock-${randomUUID().slice(0, 12)}`;
const stockPath = (externalId: string) => `/catalog/products/${externalId}/stock`;
const productPath = (externalId: string) => `/catalog/products/${externalId}?include=offers`;
const idem = () => ({ 'Idempotency-Key': randomUUID() });

type Api = ReturnType<typeof client>;

async function product(api: Api, quantity: number, sku = 'SKU-1') {
  const externalId = xid();
  const res = await api.put(`/catalog/products/${externalId}`, { name: 'Oak stool', price: 4900, sku, quantity });
  expect(res.status).toBe(200);
  return externalId;
}

const quantityOf = async (api: Api, externalId: string) =>
  ((await api.get(productPath(externalId))).body.data.offers[0] as { quantity: number }).quantity;

/** The store's `product.stock_changed` events of one product, as GET /events serves them to `reader`. */
async function stockEvents(reader: Api, productId: number) {
  const events: any[] = [];
  let cursor = 0;
  for (;;) {
    const page = await reader.get(`/events?cursor=${cursor}&limit=100&types=product.stock_changed`);
    expect(page.status).toBe(200);
    events.push(...page.body.data.filter((e: any) => e.data.product.id === productId));
    if (page.body.next_cursor === null) return events;
    cursor = page.body.next_cursor;
  }
}

describe('POST /catalog/products/{external_id}/stock', () => {
  it('adjusts the first variant and answers the product with its offers', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 10);
    const res = await api.post(stockPath(externalId), { delta: -3 }, idem());
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ external_id: externalId, quantity: 7, sku: 'SKU-1' });
    expect(res.body.data.offers).toEqual([expect.objectContaining({ sku: 'SKU-1', quantity: 7 })]);
    expect(await quantityOf(api, externalId)).toBe(7);
    const up = await api.post(stockPath(externalId), { delta: 5, sku: 'SKU-1' }, idem());
    expect(up.status).toBe(200);
    expect(await quantityOf(api, externalId)).toBe(12);
  });

  it('serves a delta as one product.stock_changed event on GET /events, and no product.updated', async () => {
    // How many deltas of a race commit, and that each raises its event, is the use case's
    // (test/usecase/stock.test.ts); here, the event as a reader of the store gets it.
    const { storeId, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const reader = client((await createKey(storeId, ['catalog:read'])).token);
    const externalId = await product(api, 30);
    const res = await api.post(stockPath(externalId), { delta: -1 }, idem());
    expect(res.status).toBe(200);
    const productId = res.body.data.id as number;
    const events = await waitFor('the numbered stock event', async () => {
      const found = await stockEvents(reader, productId);
      return found.length >= 1 ? found : undefined;
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'product.stock_changed',
      data: { sku: 'SKU-1', delta: -1, quantity: 29 },
    });
    expect(events[0].data.product.external_id).toBeUndefined();
    const updated = await reader.get('/events?cursor=0&limit=100&types=product.updated');
    expect(updated.body.data).toEqual([]);
  });

  it('refuses a mismatched expected_quantity with 409 quantity_changed and changes nothing', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const res = await api.post(stockPath(externalId), { delta: 2, expected_quantity: 4 }, idem());
    expect(res.status).toBe(409);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'quantity_changed', field: 'expected_quantity' });
    expect(await quantityOf(api, externalId)).toBe(5);
    const ok = await api.post(stockPath(externalId), { delta: 2, expected_quantity: 5 }, idem());
    expect(ok.status).toBe(200);
    expect(ok.body.data.quantity).toBe(7);
  });

  it('answers a replay with the first answer, byte for byte, and applies the delta once', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const key = idem();
    const first = await api.post(stockPath(externalId), { delta: -2 }, key);
    const replay = await api.post(stockPath(externalId), { delta: -2 }, key);
    expect(first.status).toBe(200);
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await quantityOf(api, externalId)).toBe(3);
    // A refusal is the request's answer too: its replay is the same 422, even once stock is back.
    const refusedKey = idem();
    const refused = await api.post(stockPath(externalId), { delta: -4 }, refusedKey);
    expect(refused.status).toBe(422);
    expectErrorShape(refused.body);
    expect(refused.body).toMatchObject({ code: 'insufficient_stock', field: 'delta' });
    expect((await api.post(stockPath(externalId), { delta: 10 }, idem())).status).toBe(200);
    const again = await api.post(stockPath(externalId), { delta: -4 }, refusedKey);
    expect(again.status).toBe(422);
    expect(again.text).toBe(refused.text);
    expect(await quantityOf(api, externalId)).toBe(13);
    const reused = await api.post(stockPath(externalId), { delta: -1 }, key);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused', field: 'Idempotency-Key' });
  });

  it('honours If-Match: a tag that is not the current one is 412 and changes nothing, the tag it answered lets the next delta through', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 10);
    const read = await api.get(`/catalog/products/${externalId}`);
    const first = await api.post(
      stockPath(externalId),
      { delta: -1 },
      { ...idem(), 'If-Match': read.headers.get('etag')! },
    );
    expect(first.status).toBe(200);
    const tag = first.headers.get('etag')!;
    expect(tag).not.toBe(read.headers.get('etag'));

    for (const stale of ['"nomatch"', read.headers.get('etag')!, `W/${tag}`]) {
      const refused = await api.post(stockPath(externalId), { delta: -1 }, { ...idem(), 'If-Match': stale });
      expect(refused.status, stale).toBe(412);
      expectErrorShape(refused.body);
      expect(refused.body).toMatchObject({ code: 'precondition_failed', field: 'If-Match' });
    }
    expect(await quantityOf(api, externalId)).toBe(9);

    // The ETag this route answered, in a list or as `*`, lets the delta through.
    const next = await api.post(stockPath(externalId), { delta: -2 }, { ...idem(), 'If-Match': `"other", ${tag}` });
    expect(next.status).toBe(200);
    expect(next.body.data.quantity).toBe(7);
    const any = await api.post(stockPath(externalId), { delta: 1 }, { ...idem(), 'If-Match': '*' });
    expect(any.status).toBe(200);
    expect(await quantityOf(api, externalId)).toBe(8);
    // A malformed If-Match is 422 naming it, as on PATCH.
    const malformed = await api.post(stockPath(externalId), { delta: 1 }, { ...idem(), 'If-Match': 'nomatch' });
    expect(malformed.status).toBe(422);
    expect(malformed.body).toMatchObject({ code: 'validation_failed', field: 'If-Match' });
    // If-None-Match: * (create only) as on PATCH: the product exists, so 412; an unknown one stays 404.
    const createOnly = await api.post(stockPath(externalId), { delta: 1 }, { ...idem(), 'If-None-Match': '*' });
    expect(createOnly.status).toBe(412);
    expect(createOnly.body).toMatchObject({ code: 'precondition_failed', field: 'If-None-Match' });
    const missing = await api.post(stockPath(xid()), { delta: 1 }, { ...idem(), 'If-Match': tag });
    expect(missing.status).toBe(404);
    expect(await quantityOf(api, externalId)).toBe(8);
  });

  it('replays a conditional delta under its Idempotency-Key although its own write moved the ETag, and refuses the key with another If-Match', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const tag = (await api.get(`/catalog/products/${externalId}`)).headers.get('etag')!;
    const key = idem();
    const first = await api.post(stockPath(externalId), { delta: -2 }, { ...key, 'If-Match': tag });
    expect(first.status).toBe(200);
    // The retry of a delta that went through is its first answer, not a 412 against the state it made.
    const replay = await api.post(stockPath(externalId), { delta: -2 }, { ...key, 'If-Match': tag });
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('etag')).toBe(first.headers.get('etag'));
    // The same key with another condition is another request.
    const other = await api.post(
      stockPath(externalId),
      { delta: -2 },
      { ...key, 'If-Match': first.headers.get('etag')! },
    );
    expect(other.status).toBe(422);
    expect(other.body).toMatchObject({ code: 'idempotency_key_reused' });
    // A 412 is the request's answer like any refusal: its retry is the same 412.
    const staleKey = idem();
    const refused = await api.post(stockPath(externalId), { delta: -1 }, { ...staleKey, 'If-Match': tag });
    expect(refused.status).toBe(412);
    const again = await api.post(stockPath(externalId), { delta: -1 }, { ...staleKey, 'If-Match': tag });
    expect(again.status).toBe(412);
    expect(again.text).toBe(refused.text);
    expect(await quantityOf(api, externalId)).toBe(3);
  });

  it('answers a dry run with If-Match that does not hold with the 412 the delta would', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const res = await api.post(
      `${stockPath(externalId)}?dry_run=true`,
      { delta: -2 },
      { ...idem(), 'If-Match': '"nomatch"' },
    );
    expect(res.status).toBe(412);
    expect(res.body).toMatchObject({ code: 'precondition_failed', field: 'If-Match' });
    expect(await quantityOf(api, externalId)).toBe(5);
  });

  it('adjusts the variant a sku names, and refuses a sku the product does not have', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5, 'RED-1');
    const res = await api.post(stockPath(externalId), { delta: -5, sku: 'RED-1' }, idem());
    expect(res.status).toBe(200);
    expect(res.body.data.quantity).toBe(0);
    const unknown = await api.post(stockPath(externalId), { delta: 1, sku: 'BLUE-1' }, idem());
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ code: 'validation_failed', field: 'sku' });
    expect(await quantityOf(api, externalId)).toBe(0);
  });

  it('answers 401 without a key, 403 without catalog:write, 404 for an unknown external id', async () => {
    const { storeId, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const anonymous = await client(null).post(stockPath(externalId), { delta: 1 }, idem());
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ code: 'unauthenticated' });
    const readOnly = client((await createKey(storeId, ['catalog:read'])).token);
    const forbidden = await readOnly.post(stockPath(externalId), { delta: 1 }, idem());
    expect(forbidden.status).toBe(403);
    expect(forbidden.body).toMatchObject({ code: 'forbidden' });
    const missing = await api.post(stockPath(xid()), { delta: 1 }, idem());
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'not_found' });
    // Another key's external id names nothing for this one.
    const other = client((await createKey(storeId, ['catalog:write'])).token);
    expect((await other.post(stockPath(externalId), { delta: 1 }, idem())).status).toBe(404);
    expect(await quantityOf(api, externalId)).toBe(5);
  });

  it.each([
    [{}, 'delta'],
    [{ delta: 0 }, 'delta'],
    [{ delta: 1.5 }, 'delta'],
    [{ delta: '1' }, 'delta'],
    [{ delta: 1, expected_quantity: -1 }, 'expected_quantity'],
    [{ delta: 1, sku: '' }, 'sku'],
    [{ delta: 1, quantity: 3 }, 'quantity'],
  ])('refuses %j with 422 naming %s, changing nothing', async (body, field) => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const res = await api.post(stockPath(externalId), body, idem());
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
    expect(await quantityOf(api, externalId)).toBe(5);
  });

  it('needs an Idempotency-Key', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const res = await api.post(stockPath(externalId), { delta: 1 });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'idempotency_key_required', field: 'Idempotency-Key' });
    expect(await quantityOf(api, externalId)).toBe(5);
  });

  it('answers a dry run with what the delta would do, writing nothing', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 5);
    const res = await api.post(`${stockPath(externalId)}?dry_run=true`, { delta: -2 }, idem());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: true, result: 'would_update', data: { quantity: 3 } });
    expect(res.body.changed_fields).toContain('quantity');
    const refused = await api.post(`${stockPath(externalId)}?dry_run=true`, { delta: -6 }, idem());
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: 'insufficient_stock' });
    expect(await quantityOf(api, externalId)).toBe(5);
  });
});
