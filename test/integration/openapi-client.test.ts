import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import createClient from 'openapi-fetch';
import { baseUrl, storeWithKey } from '#fixtures/api.ts';
import { placeOrder } from '#fixtures/orders.ts';
import { seedProduct } from '#fixtures/catalog.ts';
import type { paths } from '#fixtures/openapi-types.ts';
import { buildOpenApiDocument } from '#http/openapi/document.ts';
import { CLIENT_TYPES_FILE, renderClientTypes } from '#bin/openapi.ts';

/**
 * What an integrator does first: generate types from the served document with openapi-typescript
 * and drive the API with openapi-fetch, typed by them (`npm run typecheck` compiles this file).
 */
describe('a client generated from the OpenAPI document', () => {
  it('generates, with openapi-typescript from the served document, exactly the types this test is written against', async () => {
    const doc = (await (await fetch(`${baseUrl()}/openapi.json`)).json()) as { servers: { url: string }[] };
    doc.servers = buildOpenApiDocument().servers; // the served copy names this server
    const types = await renderClientTypes(doc);
    for (const op of ['listProducts', 'listOrders', 'setOrderStatus']) expect(types).toContain(`${op}: {`);
    expect(readFileSync(CLIENT_TYPES_FILE, 'utf8'), `${CLIENT_TYPES_FILE} is stale: run npm run openapi`).toBe(types);
  }, 180_000);

  it('walks the product list, an order sync (updated_since + cursor) and a status change through openapi-fetch', async () => {
    const { storeId, key } = await storeWithKey();
    const api = createClient<paths>({ baseUrl: baseUrl(), headers: { Authorization: `Bearer ${key.token}` } });
    await seedProduct(storeId, { name: 'Generated client chair' });
    const since = new Date(Date.now() - 60_000).toISOString();
    const placed = [await placeOrder(storeId), await placeOrder(storeId), await placeOrder(storeId)];

    const products = await api.GET('/products', { params: { query: { limit: 5 } } });
    expect(products.response.status).toBe(200);
    expect(products.data!.data.map((p) => p.name)).toContain('Generated client chair');

    const syncPage = (cursor: number) =>
      api.GET('/orders', { params: { query: { cursor, limit: 2, updated_since: since } } });
    const seen: string[] = [];
    for (let cursor: number | null = 0; cursor !== null; ) {
      const { data, response } = await syncPage(cursor);
      expect(response.status).toBe(200);
      seen.push(...data!.data.map((o) => o.reference));
      cursor = data!.next_cursor;
    }
    expect(seen).toEqual(placed.map((o) => o.reference));

    const changed = await api.POST('/orders/{reference}/status', {
      params: { path: { reference: placed[0]!.reference }, header: { 'Idempotency-Key': randomUUID() } },
      body: { status: 'processing' },
    });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.data.status).toBe('processing');

    const refused = await api.POST('/orders/{reference}/status', {
      params: { path: { reference: placed[0]!.reference }, header: { 'Idempotency-Key': randomUUID() } },
      body: { status: 'delivered' },
    });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ code: 'invalid_transition' });
  });
});
