import { describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, client, createKey, createStore } from '#fixtures/api.ts';
import { snapshot } from '#fixtures/dry-run.ts';
import { useMcpClients } from '#fixtures/mcp-client.ts';

/** A key in read-only MCP mode (docs/mcp.md#read-only-keys), through the official SDK client. */
const connect = useMcpClients('mcp-read-only-test');

type Result = CallToolResult & { structuredContent: any };
const READS = [
  'get_product',
  'get_product_by_external_id',
  'list_orders',
  'list_pages',
  'list_product_checksums',
  'list_products',
];

describe('keys create --mcp read-only', () => {
  it('lists only the read tools and refuses a write tool (dry run included) with forbidden; HTTP writes still work', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, undefined, { mcp: 'read-only' });
    expect(key).toMatchObject({ mcp: 'read-only' });
    const mcp = await connect(key.token);
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => n !== 'list_events').sort()).toEqual(READS);
    const before = await snapshot(storeId, key.id);
    for (const dry of [false, true]) {
      const refused = (await mcp.callTool({
        name: 'upsert_product',
        arguments: { external_id: 'r-1', name: 'Oak', price: 1, ...(dry ? { dry_run: true } : {}) },
      })) as Result;
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({ code: 'forbidden' });
      expect(refused.structuredContent.message).toMatch(/read-only/);
    }
    expect(await snapshot(storeId, key.id)).toEqual(before);
    const read = (await mcp.callTool({ name: 'list_products', arguments: {} })) as Result;
    expect(read.isError).toBeFalsy();
    const http = await client(key.token).put('/catalog/products/r-1', { name: 'Oak', price: 1 });
    expect(http.status).toBe(200);
  });

  it('keys set-mcp switches a key both ways, effective on the next request', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read', 'catalog:write']);
    expect(key).toMatchObject({ mcp: 'full' });
    const full = await connect(key.token);
    expect((await full.listTools()).tools.map((t) => t.name)).toContain('upsert_product');
    expect(await adminCommand('keys set-mcp', { id: key.id, mcp: 'read-only' })).toMatchObject({ mcp: 'read-only' });
    const narrowed = await connect(key.token);
    expect((await narrowed.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'get_product',
      'get_product_by_external_id',
      'list_events',
      'list_product_checksums',
      'list_products',
    ]);
    const refused = (await narrowed.callTool({
      name: 'upsert_tag',
      arguments: { external_id: 't', value: 'x' },
    })) as Result;
    expect(refused.structuredContent).toMatchObject({ code: 'forbidden' });
    await adminCommand('keys set-mcp', { id: key.id, mcp: 'full' });
    const back = await connect(key.token);
    expect((await back.listTools()).tools.map((t) => t.name)).toContain('upsert_product');
    const listed = await adminCommand<{ data: { id: number; mcp: string }[] }>('keys list', { store: storeId });
    expect(listed.data.find((k) => k.id === key.id)?.mcp).toBe('full');
  });

  it('bad arguments are 422 naming the flag, an unknown key 404, a revoked key 409', async () => {
    const storeId = await createStore();
    const bad = await admin({
      command: 'keys create',
      args: { store: storeId, name: 'x', abilities: 'catalog:read', mcp: 'readonly' },
    });
    expect(bad).toMatchObject({ ok: false, error: { code: 'validation_failed', field: 'mcp' } });
    const key = await createKey(storeId, ['catalog:read']);
    expect(await admin({ command: 'keys set-mcp', args: { id: key.id, mcp: 'none' } })).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', field: 'mcp' },
    });
    expect(await admin({ command: 'keys set-mcp', args: { id: key.id } })).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', field: 'mcp' },
    });
    expect(await admin({ command: 'keys set-mcp', args: { id: 99_999_999, mcp: 'full' } })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    await adminCommand('keys revoke', { id: key.id });
    expect(await admin({ command: 'keys set-mcp', args: { id: key.id, mcp: 'full' } })).toMatchObject({
      ok: false,
      error: { code: 'invalid_transition' },
    });
  });
});
