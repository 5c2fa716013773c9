import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, createStore } from '../fixtures/api.ts';
import { createGateway } from '../../shared/local/gateway.ts';
import { API_BASE_PATH } from '../../shared/http/api-routes.ts';

/**
 * DynamoDB round trips and capacity units per request, measured, not guessed: a second local
 * gateway in this worker (same table) whose per-request log line carries the counts that
 * shared/db/client.ts collects. Counts include the authorizer's one UpdateItem (key lookup and
 * rate-limit slot). The bounds below are the design; the table is printed for the docs.
 */
describe('DynamoDB cost of the catalog writes', () => {
  let server: Server;
  let base: string;
  const lines: string[] = [];
  const measured: Record<string, { calls: number; ops: string; rcu: number; wcu: number }> = {};

  beforeAll(async () => {
    server = createGateway({ log: (line) => lines.push(line) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    console.log(
      ['request | round trips (incl. authorizer) | operations | RCU | WCU', ...Object.entries(measured).map(([k, m]) => `${k} | ${m.calls} | ${m.ops} | ${m.rcu} | ${m.wcu}`)].join('\n'),
    );
  });

  async function measure(label: string, token: string, method: string, path: string, body?: unknown) {
    const before = lines.length;
    const res = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    await res.text();
    const line = lines.slice(before).find((l) => l.includes(path.split('?')[0]!)) ?? '';
    const m = /ddb=(\d+)(?: \[([^\]]*)\] rcu=([\d.]+) wcu=([\d.]+))?/.exec(line);
    const result = { status: res.status, calls: Number(m?.[1]), ops: m?.[2] ?? '', rcu: Number(m?.[3] ?? 0), wcu: Number(m?.[4] ?? 0) };
    measured[label] = { calls: result.calls, ops: result.ops, rcu: result.rcu, wcu: result.wcu };
    return result;
  }

  it('stays within the designed round trips', async () => {
    const storeId = await createStore();
    const { token } = await createKey(storeId, ['catalog:read', 'catalog:write']);
    const product = { name: 'Cost Probe', price: 100, sku: 'COST-1', description: 'A small product.' };
    // Warm the authorizer's token cache, as on any key in use: from then on it costs one UpdateItem.
    const warm = await measure('authorizer alone (GET /products/1, 404)', token, 'GET', '/products/1');
    expect(warm.status).toBe(404);

    expect((await measure('PUT category (create)', token, 'PUT', '/catalog/categories/c1', { name: 'C1' })).calls).toBeLessThanOrEqual(4);
    expect((await measure('PUT category (rename)', token, 'PUT', '/catalog/categories/c1', { name: 'C1 renamed' })).calls).toBe(2);
    expect((await measure('PUT category (unchanged)', token, 'PUT', '/catalog/categories/c1', { name: 'C1 renamed' })).calls).toBe(2);
    await measure('PUT tag (create)', token, 'PUT', '/catalog/tags/t1', { value: 'T1' });

    const create = await measure('PUT product (create)', token, 'PUT', '/catalog/products/p1', product);
    expect(create.status).toBe(200);
    // authorizer + BatchGet(external-id map, references) + UpdateItem(offer ids) + TransactWrite
    expect(create.calls).toBe(4);
    const withLinks = await measure('PUT product (create, 1 category + 1 tag)', token, 'PUT', '/catalog/products/p2', {
      ...product,
      category_external_ids: ['c1'],
      tag_external_ids: ['t1'],
    });
    expect(withLinks.calls).toBe(4);

    // authorizer + BatchGet + GetItem(product) + TransactWrite
    const replace = await measure('PUT product (replace, name + SKU change)', token, 'PUT', '/catalog/products/p1', { ...product, name: 'Cost Probe 2', sku: 'COST-2' });
    expect(replace.calls).toBe(4);
    const replaceSmall = await measure('PUT product (replace, price only)', token, 'PUT', '/catalog/products/p1', { ...product, name: 'Cost Probe 2', sku: 'COST-2', price: 200 });
    expect(replaceSmall.calls).toBe(4);
    const unchanged = await measure('PUT product (unchanged)', token, 'PUT', '/catalog/products/p1', { ...product, name: 'Cost Probe 2', sku: 'COST-2', price: 200 });
    expect(unchanged.calls).toBe(3);
    expect(unchanged.wcu).toBe(1); // the authorizer's rate-limit write only

    const patch = await measure('PATCH product (price)', token, 'PATCH', '/catalog/products/p1', { price: 300 });
    expect(patch.calls).toBe(4);
    await measure('PATCH product (name)', token, 'PATCH', '/catalog/products/p1', { name: 'Cost Probe 3' });
    const patchSame = await measure('PATCH product (unchanged)', token, 'PATCH', '/catalog/products/p1', { price: 300 });
    expect(patchSame.calls).toBe(3);
    const missing = await measure('PATCH product (404)', token, 'PATCH', '/catalog/products/nope', { price: 1 });
    expect(missing.status).toBe(404);
    expect(missing.calls).toBe(2);
    const invalid = await measure('PUT product (422 validation)', token, 'PUT', '/catalog/products/p1', { price: -1 });
    expect(invalid.calls).toBe(1);
  });
});
