import { describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { storeWithKey } from '#fixtures/api.ts';
import { nothingRaisedSince, numbered, snapshot } from '#fixtures/dry-run.ts';
import { idemKey, placeOrder } from '#fixtures/orders.ts';
import { useMcpClients } from '#fixtures/mcp-client.ts';

/** `dry_run: true` on the MCP write tools (docs/mcp.md#dry-runs), through the official SDK client. */
const connect = useMcpClients('mcp-dry-run-test');

type Result = CallToolResult & { structuredContent: any };
const call = async (mcp: Client, name: string, args: Record<string, unknown>) =>
  (await mcp.callTool({ name, arguments: args })) as Result;

describe('MCP write tools: dry_run', () => {
  it('every write tool takes dry_run and no read tool does; dry-run results validate against the outputSchema', async () => {
    const { key } = await storeWithKey();
    const mcp = await connect(key.token);
    const { tools } = await mcp.listTools();
    for (const tool of tools) {
      const takes = 'dry_run' in (tool.inputSchema.properties ?? {});
      expect(takes, tool.name).toBe(tool.annotations?.readOnlyHint === false);
    }
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const upsert = tools.find((t) => t.name === 'upsert_product')!;
    const result = await call(mcp, 'upsert_product', { external_id: 'm-1', name: 'Oak', price: 100, dry_run: true });
    expect(ajv.validate(upsert.outputSchema!, result.structuredContent), ajv.errorsText()).toBe(true);
    // The batch's plan, an item in error included, has the shape the HTTP dry run documents.
    const batchTool = tools.find((t) => t.name === 'upsert_products')!;
    const batch = await call(mcp, 'upsert_products', {
      items: [
        { external_id: 'm-1', name: 'Oak', price: 100 },
        { external_id: 'm-9', name: '', price: 100 },
      ],
      dry_run: true,
    });
    expect(batch.isError, JSON.stringify(batch.content)).toBeFalsy();
    expect(batch.structuredContent.data.map((i: { status: number }) => i.status)).toEqual([200, 422]);
    expect(ajv.validate(batchTool.outputSchema!, batch.structuredContent), ajv.errorsText()).toBe(true);
  });

  it('upsert_product: would_create, then unchanged and would_update after the real call; nothing written, no event', async () => {
    const { storeId, key } = await storeWithKey();
    const mcp = await connect(key.token);
    const before = await snapshot(storeId, key.id);
    const created = await call(mcp, 'upsert_product', { external_id: 'm-2', name: 'Oak', price: 100, dry_run: true });
    expect(created.isError).toBeFalsy();
    expect(created.structuredContent).toMatchObject({ dry_run: true, result: 'would_create', data: { name: 'Oak' } });
    expect(created.structuredContent.untrusted_fields).toContain('data.name');
    expect(await snapshot(storeId, key.id)).toEqual(before);

    expect((await call(mcp, 'upsert_product', { external_id: 'm-2', name: 'Oak', price: 100 })).isError).toBeFalsy();
    const events = await numbered(storeId, 1);
    const written = await snapshot(storeId, key.id);
    const same = await call(mcp, 'upsert_product', { external_id: 'm-2', name: 'Oak', price: 100, dry_run: true });
    expect(same.structuredContent).toMatchObject({ result: 'unchanged', changed_fields: [] });
    const renamed = await call(mcp, 'update_product', { external_id: 'm-2', name: 'Ash', dry_run: true });
    expect(renamed.structuredContent).toMatchObject({ result: 'would_update', changed_fields: ['name'] });
    const batch = await call(mcp, 'upsert_products', {
      items: [
        { external_id: 'm-2', name: 'Oak', price: 100 },
        { external_id: 'm-3', name: 'Elm', price: 5 },
      ],
      dry_run: true,
    });
    expect(batch.structuredContent.data.map((i: { result: string }) => i.result)).toEqual([
      'unchanged',
      'would_create',
    ]);
    expect(await snapshot(storeId, key.id)).toEqual(written);
    await nothingRaisedSince(storeId, events);
  });

  it('an invalid call gives the same tool error dry or not; dry_run must be a boolean', async () => {
    const { key } = await storeWithKey();
    const mcp = await connect(key.token);
    const args = { external_id: 'm-4', name: 'Oak' };
    const dry = await call(mcp, 'upsert_product', { ...args, dry_run: true });
    const real = await call(mcp, 'upsert_product', args);
    expect(dry.isError).toBe(true);
    expect(dry.structuredContent).toEqual(real.structuredContent);
    const typo = await call(mcp, 'upsert_product', { ...args, price: 1, dry_run: 'yes' });
    expect(typo.isError).toBe(true);
    expect(typo.structuredContent).toMatchObject({ code: 'validation_failed', field: 'dry_run' });
  });

  it('set_order_status: the dry run moves nothing and leaves the idempotency_key free for the real call', async () => {
    const { storeId, key } = await storeWithKey(['orders:read', 'orders:write-status']);
    const order = await placeOrder(storeId);
    await numbered(storeId, 1);
    const before = await snapshot(storeId, key.id);
    const mcp = await connect(key.token);
    const k = idemKey();
    const args = { reference: order.reference, status: 'cancelled', idempotency_key: k };
    const dry = await call(mcp, 'set_order_status', { ...args, dry_run: true });
    expect(dry.structuredContent).toMatchObject({
      dry_run: true,
      result: 'would_update',
      data: { status: 'cancelled' },
    });
    expect(await snapshot(storeId, key.id)).toEqual(before);
    const real = await call(mcp, 'set_order_status', args);
    expect(real.structuredContent.dry_run).toBeUndefined();
    expect(real.structuredContent.data.status).toBe('cancelled');
    const listed = await call(mcp, 'list_orders', {});
    expect(listed.structuredContent.data[0].status).toBe('cancelled');
  });
});
