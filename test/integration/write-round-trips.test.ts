import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createStore, type TestKey } from '#fixtures/api.ts';
import { idemKey, insertTestOrder } from '#fixtures/orders.ts';
import { idem, insertTestPage, pageBody, xid } from '#fixtures/content.ts';
import { createGateway } from '#emulation/local/gateway.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';

/**
 * DynamoDB round trips per request of the idempotent and addressed writes (issue 13), counted by
 * the SDK middleware of shared/db/core/client.ts through a second local gateway in this worker (same
 * table), authorizer included: its one UpdateItem, then one read, then one transaction.
 */
type Cost = { status: number; body: any; text: string; ops: string[] };

describe('round trips of the writes, authorizer included', () => {
  let server: Server;
  let base: string;
  let storeId: string;
  let key: TestKey;
  const costs: Cost[] = [];

  beforeAll(async () => {
    server = createGateway({
      onRequest: (r) => costs.push({ status: r.status, body: undefined, text: '', ops: r.ops }),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
    storeId = await createStore();
    key = await createKey(storeId);
    // Warm the authorizer's token cache, as on any key in use: from then on it costs one UpdateItem.
    await call('GET', '/orders');
  });
  afterAll(() => new Promise((r) => server.close(r)));

  async function call(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<Cost> {
    const before = costs.length;
    const res = await fetch(base + path, {
      method,
      headers: {
        Authorization: `Bearer ${key.token}`,
        'Content-Type': 'application/json',
        ...(idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const counted = costs[before];
    if (!counted) throw new Error(`no cost recorded for ${method} ${path}`);
    return { status: res.status, body: JSON.parse(text), text, ops: counted.ops };
  }

  const AUTH = 'UpdateItem';

  it('POST /orders/{reference}/status: change 3, replay 2, reuse 2, no-op and errors 3, validation 2', async () => {
    const order = await insertTestOrder(storeId, { status: 'paid' });
    const path = `/orders/${order.reference}/status`;
    const k = idemKey();
    const first = await call('POST', path, { status: 'processing' }, k);
    expect(first.status).toBe(200);
    expect(first.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const replay = await call('POST', path, { status: 'processing' }, k);
    expect(replay.text).toBe(first.text);
    expect(replay.ops).toEqual([AUTH, 'BatchGetItem']);
    const reuse = await call('POST', path, { status: 'cancelled' }, k);
    expect(reuse.body.code).toBe('idempotency_key_reused');
    expect(reuse.ops).toEqual([AUTH, 'BatchGetItem']);
    // An answer that changes nothing is stored with one conditional PutItem.
    const noop = await call('POST', path, { status: 'processing' }, idemKey());
    expect(noop.status).toBe(200);
    expect(noop.ops).toEqual([AUTH, 'BatchGetItem', 'PutItem']);
    const forbidden = await call('POST', path, { status: 'pending' }, idemKey());
    expect(forbidden.status).toBe(409);
    expect(forbidden.ops).toEqual([AUTH, 'BatchGetItem', 'PutItem']);
    const unknown = await call('POST', '/orders/NO-SUCH-REF/status', { status: 'shipped' }, idemKey());
    expect(unknown.status).toBe(404);
    expect(unknown.ops).toEqual([AUTH, 'BatchGetItem', 'PutItem']);
    const invalid = await call('POST', path, { status: 'paid' }, idemKey());
    expect(invalid.status).toBe(422);
    expect(invalid.ops).toEqual([AUTH, 'PutItem']);
    // The list stays at the authorizer plus one Query.
    expect((await call('GET', '/orders')).ops).toEqual([AUTH, 'Query']);
  });

  it('POST /content/pages/{external_id}/publish: change 3, replay 2, no-op 3; unpublish 3', async () => {
    const page = await insertTestPage(storeId, key.id);
    const path = `/content/pages/${page.external_id}`;
    const k = idem();
    const first = await call('POST', `${path}/publish`, undefined, k);
    expect(first.status).toBe(200);
    expect(first.body.data.status).toBe('published');
    expect(first.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const replay = await call('POST', `${path}/publish`, undefined, k);
    expect(replay.text).toBe(first.text);
    expect(replay.ops).toEqual([AUTH, 'BatchGetItem']);
    const noop = await call('POST', `${path}/publish`, undefined, idem());
    expect(noop.ops).toEqual([AUTH, 'BatchGetItem', 'PutItem']);
    const unpublish = await call('POST', `${path}/unpublish`);
    expect(unpublish.body.data.status).toBe('unpublished');
    expect(unpublish.ops).toEqual([AUTH, 'GetItem', 'TransactWriteItems']);
  });

  it('PUT /content/pages/{external_id}: create 3 (the page id sequence is read beside the external id), update 3, no change 2', async () => {
    const id = xid();
    const body = pageBody();
    const created = await call('PUT', `/content/pages/${id}`, body);
    expect(created.status).toBe(200);
    expect(created.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const updated = await call('PUT', `/content/pages/${id}`, { ...body, title: 'Retitled' });
    expect(updated.body.data.title).toBe('Retitled');
    expect(updated.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const same = await call('PUT', `/content/pages/${id}`, { ...body, title: 'Retitled' });
    expect(same.ops).toEqual([AUTH, 'BatchGetItem']);
  });

  it('items written before the copies existed still work, cost one read more once, and carry the copy afterwards', async () => {
    const order = await insertTestOrder(storeId, { status: 'paid' });
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.orderRef(storeId, order.reference), type: 'order_ref', order_id: order.id },
      }),
    );
    const path = `/orders/${order.reference}/status`;
    const first = await call('POST', path, { status: 'processing' }, idemKey());
    expect(first.body.data).toMatchObject({
      id: order.id,
      reference: order.reference,
      status: 'processing',
      total: order.total,
    });
    expect(first.ops).toEqual([AUTH, 'BatchGetItem', 'GetItem', 'TransactWriteItems']);
    const next = await call('POST', path, { status: 'shipped' }, idemKey());
    expect(next.body.data.status).toBe('shipped');
    expect(next.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);

    const page = await insertTestPage(storeId, key.id);
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.externalId(key.id, 'page', page.external_id), type: 'external_id', record_id: page.id },
      }),
    );
    const published = await call('POST', `/content/pages/${page.external_id}/publish`, undefined, idem());
    expect(published.body.data).toMatchObject({
      id: page.id,
      external_id: page.external_id,
      status: 'published',
      body: page.body,
    });
    expect(published.ops).toEqual([AUTH, 'BatchGetItem', 'GetItem', 'TransactWriteItems']);
    const saved = await call('PUT', `/content/pages/${page.external_id}`, pageBody({ slug: page.slug }));
    expect(saved.body.data.id).toBe(page.id);
    expect(saved.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);

    const other = await insertTestPage(storeId, key.id);
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.externalId(key.id, 'page', other.external_id), type: 'external_id', record_id: other.id },
      }),
    );
    const legacySave = await call(
      'PUT',
      `/content/pages/${other.external_id}`,
      pageBody({ slug: other.slug, title: 'Saved over a map-only item' }),
    );
    expect(legacySave.body.data).toMatchObject({ id: other.id, title: 'Saved over a map-only item' });
    expect(legacySave.ops).toEqual([AUTH, 'BatchGetItem', 'GetItem', 'TransactWriteItems']);
  });

  it('PUT and PATCH /catalog/products/{external_id}: create 3, replace 3, patch 3, no change 2 (the link holds a copy, the sequence rides in the read)', async () => {
    const id = `rt-${Math.random().toString(36).slice(2, 10)}`;
    const body = { name: 'Round Trip', price: 100, sku: `${id}-1` };
    const created = await call('PUT', `/catalog/products/${id}`, body);
    expect(created.status).toBe(200);
    expect(created.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const replaced = await call('PUT', `/catalog/products/${id}`, { ...body, price: 200 });
    expect(replaced.body.data).toMatchObject({ id: created.body.data.id, min_price: 200 });
    expect(replaced.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const renamed = await call('PUT', `/catalog/products/${id}`, {
      ...body,
      price: 200,
      name: 'Round Trip 2',
      sku: `${id}-2`,
    });
    expect(renamed.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const patched = await call('PATCH', `/catalog/products/${id}`, { quantity: 5 });
    expect(patched.body.data).toMatchObject({ name: 'Round Trip 2', sku: `${id}-2`, min_price: 200, quantity: 5 });
    expect(patched.ops).toEqual([AUTH, 'BatchGetItem', 'TransactWriteItems']);
    const same = await call('PUT', `/catalog/products/${id}`, {
      ...body,
      price: 200,
      name: 'Round Trip 2',
      sku: `${id}-2`,
      quantity: 5,
    });
    expect(same.body.data.updated_at).toBe(patched.body.data.updated_at);
    expect(same.ops).toEqual([AUTH, 'BatchGetItem']);
    const samePatch = await call('PATCH', `/catalog/products/${id}`, { quantity: 5 });
    expect(samePatch.ops).toEqual([AUTH, 'BatchGetItem']);
    const missing = await call('PATCH', `/catalog/products/${id}-none`, { quantity: 1 });
    expect(missing.status).toBe(404);
    expect(missing.ops).toEqual([AUTH, 'BatchGetItem']);
    const invalid = await call('PUT', `/catalog/products/${id}`, { price: -1 });
    expect(invalid.status).toBe(422);
    expect(invalid.ops).toEqual([AUTH]);
    // Reads stay at the authorizer plus one read.
    expect((await call('GET', `/products/${created.body.data.id}`)).ops).toEqual([AUTH, 'GetItem']);
  });
});
