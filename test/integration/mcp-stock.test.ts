import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { client, createKey, createStore, storeWithKey } from '#fixtures/api.ts';
import { useMcpClients } from '#fixtures/mcp-client.ts';

/** The MCP tool adjust_stock (docs/mcp.md, docs/catalog-writes.md#stock-deltas) through the official SDK client. */
const connect = useMcpClients('mcp-stock-test');
type Result = CallToolResult & { structuredContent: any };

const xid = () => `mcp-stock-${randomUUID().slice(0, 8)}`;
const idemKey = () => randomUUID();

async function product(api: ReturnType<typeof client>, quantity: number) {
  const externalId = xid();
  expect(
    (await api.put(`/catalog/products/${externalId}`, { name: 'Oak', price: 100, sku: 'OAK-1', quantity })).status,
  ).toBe(200);
  return externalId;
}

const quantityOf = async (api: ReturnType<typeof client>, externalId: string) =>
  (await api.get(`/catalog/products/${externalId}`)).body.data.quantity as number;

describe('MCP adjust_stock', () => {
  it('adjusts the stock once; a replay with the same idempotency_key returns the first result', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 4);
    const mcp = await connect(key.token);
    const tool = (await mcp.listTools()).tools.find((t) => t.name === 'adjust_stock');
    expect(tool?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(tool?.inputSchema.required).toEqual(expect.arrayContaining(['external_id', 'delta', 'idempotency_key']));
    const k = idemKey();
    const first = (await mcp.callTool({
      name: 'adjust_stock',
      arguments: { external_id: externalId, delta: -3, idempotency_key: k },
    })) as Result;
    expect(first.isError).toBeFalsy();
    expect(first.structuredContent.data).toMatchObject({ external_id: externalId, quantity: 1 });
    const replay = (await mcp.callTool({
      name: 'adjust_stock',
      arguments: { external_id: externalId, delta: -3, idempotency_key: k },
    })) as Result;
    expect(replay.content).toEqual(first.content);
    expect(await quantityOf(api, externalId)).toBe(1);
  });

  it('refuses what the route refuses, with the same codes, changing nothing', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const externalId = await product(api, 2);
    const mcp = await connect(key.token);
    const call = async (args: Record<string, unknown>) =>
      (await mcp.callTool({ name: 'adjust_stock', arguments: { external_id: externalId, ...args } })) as Result;
    const short = await call({ delta: -3, idempotency_key: idemKey() });
    expect(short.isError).toBe(true);
    expect(short.structuredContent).toMatchObject({ code: 'insufficient_stock', field: 'delta' });
    const moved = await call({ delta: 1, expected_quantity: 5, idempotency_key: idemKey() });
    expect(moved.structuredContent).toMatchObject({ code: 'quantity_changed', field: 'expected_quantity' });
    const noKey = await call({ delta: 1 });
    expect(noKey.structuredContent).toMatchObject({ code: 'idempotency_key_required', field: 'idempotency_key' });
    const dry = await call({ delta: -2, idempotency_key: idemKey(), dry_run: true });
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({ dry_run: true, result: 'would_update', data: { quantity: 0 } });
    expect(await quantityOf(api, externalId)).toBe(2);
  });

  it('is not listed for a read-only MCP key and refused when called; a write budget of 2 admits the PUT and one delta', async () => {
    const storeId = await createStore();
    const readOnly = await createKey(storeId, ['catalog:read', 'catalog:write'], { mcp: 'read-only' });
    const externalId = await product(client(readOnly.token), 3);
    const ro = await connect(readOnly.token);
    expect((await ro.listTools()).tools.map((t) => t.name)).not.toContain('adjust_stock');
    const refused = (await ro.callTool({
      name: 'adjust_stock',
      arguments: { external_id: externalId, delta: -1, idempotency_key: idemKey() },
    })) as Result;
    expect(refused.structuredContent).toMatchObject({ code: 'forbidden' });
    expect(await quantityOf(client(readOnly.token), externalId)).toBe(3);

    const budgeted = await createKey(storeId, ['catalog:read', 'catalog:write'], { writes_per_hour: '2' });
    const api = client(budgeted.token);
    const own = await product(api, 3);
    const mcp = await connect(budgeted.token);
    const call = () =>
      mcp.callTool({ name: 'adjust_stock', arguments: { external_id: own, delta: -1, idempotency_key: idemKey() } });
    expect(((await call()) as Result).isError).toBeFalsy();
    expect(((await call()) as Result).structuredContent).toMatchObject({ code: 'write_budget_exceeded' });
    expect(await quantityOf(api, own)).toBe(2);
  });
});
