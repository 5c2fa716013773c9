import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, baseUrl, client, createKey, createStore, expectErrorShape } from '#fixtures/api.ts';
import { idemKey, placeOrder, statusPath } from '#fixtures/orders.ts';
import { createGateway } from '#emulation/local/gateway.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/** The per-key write budget (docs/api.md#write-budget) over real HTTP and the MCP SDK client. */
const product = (name: string) => ({ name, price: 100 });
const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

describe('write budget', () => {
  it('20 concurrent writes against a budget of 5: exactly 5 succeed, the rest are 429 write_budget_exceeded with Retry-After; dry runs still answer', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, undefined, { writes_per_hour: '5' });
    expect(key).toMatchObject({ writes_per_hour: 5, status_changes_per_hour: null });
    const api = client(key.token);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => api.put(`/catalog/products/w-${i}`, product(`P${i}`))),
    );
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    expect(ok).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) {
      expectErrorShape(r.body);
      expect(r.body.code).toBe('write_budget_exceeded');
      const retry = Number(r.headers.get('Retry-After'));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(3600);
    }
    const listed = await api.get('/products?limit=50');
    expect(listed.body.total).toBe(5);
    const dry = await api.put('/catalog/products/w-99?dry_run=true', product('x'));
    expect(dry.status).toBe(200);
    expect(dry.body.result).toBe('would_create');
    // Reads are not writes.
    expect((await api.get('/catalog/products/w-99')).status).toBe(404);
    await adminCommand('keys set-budget', { id: key.id, writes_per_hour: 'none' });
    expect((await api.put('/catalog/products/w-99', product('x'))).status).toBe(200);
  });

  it('status changes per hour: a second change is refused, a catalog write is not', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, undefined, { status_changes_per_hour: '1' });
    const api = client(key.token);
    const [a, b] = [await placeOrder(storeId), await placeOrder(storeId)];
    const first = await api.post(statusPath(a.reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
    expect(first.status).toBe(200);
    const second = await api.post(statusPath(b.reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
    expect(second.status).toBe(429);
    expect(second.body.code).toBe('write_budget_exceeded');
    const orders = (await api.get('/orders')).body.data as { reference: string; status: string }[];
    expect(orders.find((o) => o.reference === b.reference)?.status).toBe(b.status);
    expect((await api.put('/catalog/products/s-1', product('x'))).status).toBe(200);
  });

  it('MCP: a write tool over the budget is a tool error write_budget_exceeded; a dry run is not counted', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, undefined, { writes_per_hour: '1' });
    const mcp = new Client({ name: 'write-budget-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${baseUrl()}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key.token}` } },
      }),
    );
    open.push(mcp);
    const call = async (args: Record<string, unknown>) =>
      (await mcp.callTool({ name: 'upsert_tag', arguments: args })) as CallToolResult & { structuredContent: any };
    expect((await call({ external_id: 't-1', value: 'oak', dry_run: true })).isError).toBeFalsy();
    expect((await call({ external_id: 't-1', value: 'oak' })).isError).toBeFalsy();
    const refused = await call({ external_id: 't-2', value: 'ash' });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'write_budget_exceeded', field: null });
  });

  it('says which budget is spent and when it comes back, the same over HTTP and MCP, with the Retry-After it names', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, undefined, { writes_per_hour: '1', status_changes_per_hour: '1' });
    const api = client(key.token);
    expect((await api.put('/catalog/products/m-1', product('first'))).status).toBe(200);
    const http = await api.put('/catalog/products/m-2', product('second'));
    expect(http.status).toBe(429);
    const retry = Number(http.headers.get('Retry-After'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(3600);
    const spent = (limits: string, seconds: number) => ({
      code: 'write_budget_exceeded',
      message: `This key's write budget (${limits} per hour) is spent for this hour; try again in ${seconds} s.`,
      field: null,
    });
    expect(http.body).toEqual(spent('1 writes', retry));
    // A status change counts against both limits, and says so.
    const order = await placeOrder(storeId);
    const change = await api.post(
      statusPath(order.reference),
      { status: 'processing' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(change.status).toBe(429);
    expect(change.body).toEqual(spent('1 writes / 1 status changes', Number(change.headers.get('Retry-After'))));

    const mcp = new Client({ name: 'write-budget-message-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${baseUrl()}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${key.token}` } },
      }),
    );
    open.push(mcp);
    const tool = (await mcp.callTool({
      name: 'upsert_tag',
      arguments: { external_id: 't-1', value: 'oak' },
    })) as CallToolResult & { structuredContent: { message: string } };
    expect(tool.isError).toBe(true);
    const seconds = Number(/try again in (\d+) s\./.exec(tool.structuredContent.message)?.[1]);
    expect(tool.structuredContent).toMatchObject(spent('1 writes', seconds));
    expect((await api.get('/catalog/products/m-2')).status).toBe(404);
  });

  it('keys set-budget: 422 naming the flag, 404 for an unknown key; keys create refuses a bad budget', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read']);
    const cases: [Record<string, unknown>, string][] = [
      [{ id: key.id }, 'writes_per_hour'],
      [{ id: key.id, writes_per_hour: '0' }, 'writes_per_hour'],
      [{ id: key.id, status_changes_per_hour: 'many' }, 'status_changes_per_hour'],
    ];
    for (const [args, field] of cases)
      expect(await admin({ command: 'keys set-budget', args })).toMatchObject({
        ok: false,
        error: { code: 'validation_failed', field },
      });
    expect(await admin({ command: 'keys set-budget', args: { id: 99_999_999, writes_per_hour: '3' } })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    const bad = await admin({
      command: 'keys create',
      args: { store: storeId, name: 'x', abilities: 'catalog:read', writes_per_hour: '-1' },
    });
    expect(bad).toMatchObject({ ok: false, error: { code: 'validation_failed', field: 'writes_per_hour' } });
    expect(await adminCommand('keys set-budget', { id: key.id, writes_per_hour: '3' })).toMatchObject({
      writes_per_hour: 3,
    });
  });
});

describe('round trips of a write with and without a budget', () => {
  let server: Server;
  let base: string;
  const ops: string[][] = [];
  beforeAll(async () => {
    server = createGateway({ onRequest: (r) => ops.push(r.ops) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  async function costOf(token: string, path: string, body: unknown): Promise<string[]> {
    const before = ops.length;
    const res = await fetch(base + path, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    return ops[before]!;
  }

  it('a key without a budget pays no extra round trip; a key with one pays exactly one UpdateItem', async () => {
    const storeId = await createStore();
    const free = await createKey(storeId);
    const budgeted = await createKey(storeId, undefined, { writes_per_hour: '100' });
    // Warm both tokens' cache, then write the same kind of change with each.
    await costOf(free.token, '/catalog/categories/c-0', { name: 'warm' });
    await costOf(budgeted.token, '/catalog/categories/c-0', { name: 'warm' });
    const plain = await costOf(free.token, '/catalog/categories/c-1', { name: 'Chairs' });
    const counted = await costOf(budgeted.token, '/catalog/categories/c-1', { name: 'Chairs' });
    expect(counted.length).toBe(plain.length + 1);
    expect(counted.filter((o) => o === 'UpdateItem').length).toBe(plain.filter((o) => o === 'UpdateItem').length + 1);
  });
});
