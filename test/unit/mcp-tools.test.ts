import { describe, expect, it } from 'vitest';
import { TOOLS } from '#functions/mcp/tools.ts';
import { bindTools, toolResult } from '#functions/mcp/server.ts';
import { pathSegment } from '#functions/mcp/args.ts';
import { isRefused } from '#domain/outcome.ts';

const tool = (name: string) => TOOLS.find((t) => t.name === name)!;

describe('MCP tool table', () => {
  it("has exactly the tools of docs/contract.md#mcp, each bound to its endpoint with the endpoint's abilities", () => {
    const abilities = Object.fromEntries([...bindTools().values()].map((b) => [b.tool.name, b.abilities.join('|')]));
    expect(abilities).toEqual({
      list_products: 'catalog:read',
      get_product: 'catalog:read',
      get_product_by_external_id: 'catalog:read',
      list_product_checksums: 'catalog:read',
      upsert_product: 'catalog:write',
      update_product: 'catalog:write',
      upsert_products: 'catalog:write',
      upsert_category: 'catalog:write',
      upsert_tag: 'catalog:write',
      adjust_stock: 'catalog:write',
      list_orders: 'orders:read',
      set_order_status: 'orders:write-status',
      list_pages: 'content:read',
      save_page: 'content:write',
      publish_page: 'content:write',
      unpublish_page: 'content:write',
      list_events: 'orders:read|catalog:read|content:read',
    });
  });

  it("generates each tool's JSON Schema from the valibot schemas the endpoint validates with", async () => {
    const input = async (name: string) => (await tool(name).schemas()).inputSchema;
    const schema = async (name: string) => (await input(name)).properties as Record<string, Record<string, unknown>>;
    expect((await schema('list_products')).limit).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 50,
      default: 15,
    });
    expect((await schema('upsert_product')).price).toMatchObject({
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000_000_000,
    });
    expect((await schema('upsert_product')).status).toMatchObject({ enum: ['active', 'draft', 'archived'] });
    expect((await schema('list_pages')).type).toMatchObject({ enum: ['page', 'blog'] });
    expect((await input('upsert_product')).required).toEqual(['external_id', 'name', 'price']);
    expect((await input('save_page')).required).toEqual(['external_id', 'type', 'title', 'slug', 'body']);
  });

  it("converts a tool's schemas once: every tools/list after the first gets the same documents", async () => {
    const first = await tool('upsert_product').schemas();
    expect(await tool('upsert_product').schemas()).toBe(first);
  });

  it.each(TOOLS.map((t) => [t.name, t]))(
    '%s declares a closed object schema whose required arguments are properties',
    async (_, t) => {
      const { inputSchema } = await t.schemas();
      expect(inputSchema.type).toBe('object');
      expect(inputSchema.additionalProperties).toBe(false);
      for (const name of inputSchema.required ?? []) expect(inputSchema.properties).toHaveProperty(name);
    },
  );

  it('requires idempotency_key exactly on adjust_stock, set_order_status and publish_page', async () => {
    const inputs = await Promise.all(TOOLS.map(async (t) => [t.name, (await t.schemas()).inputSchema] as const));
    const withKey = inputs.filter(([, schema]) => schema.required?.includes('idempotency_key')).map(([name]) => name);
    expect(withKey.sort()).toEqual(['adjust_stock', 'publish_page', 'set_order_status']);
  });
});

describe('MCP arguments → endpoint request', () => {
  it('turns list_products arguments into the query of GET /products', () => {
    expect(
      tool('list_products').toRequest({
        page: 2,
        limit: 5,
        filter_name: 'oak',
        filter_sku: 'S-1',
        include_offers: true,
      }),
    ).toEqual({
      query: { page: '2', limit: '5', 'filter[name]': 'oak', 'filter[sku]': 'S-1', include: 'offers' },
    });
    expect(tool('list_products').toRequest({ include_offers: false })).toEqual({ query: {} });
  });

  it('refuses arguments of the wrong JSON type or unknown, naming them', () => {
    expect(tool('list_products').toRequest({ page: '2' })).toMatchObject({
      kind: 'refused',
      code: 'validation_failed',
      field: 'page',
    });
    expect(tool('list_products').toRequest({ limit: 2.5 })).toMatchObject({ field: 'limit' });
    expect(tool('list_orders').toRequest({ since: 'x' })).toMatchObject({ field: 'since' });
    expect(tool('get_product').toRequest({})).toMatchObject({ field: 'id' });
    expect(tool('upsert_product').toRequest({ external_id: 7, name: 'x', price: 1 })).toMatchObject({
      field: 'external_id',
    });
  });

  it('puts external_id into the path and the other arguments into the body', () => {
    expect(tool('upsert_product').toRequest({ external_id: 'a:b', name: 'Chair', price: 100 })).toEqual({
      pathParameters: { external_id: 'a:b' },
      body: { name: 'Chair', price: 100 },
    });
  });

  it('sends idempotency_key as the Idempotency-Key and keeps it out of the body (the request fingerprint)', () => {
    expect(
      tool('set_order_status').toRequest({ reference: 'ORD-1', status: 'shipped', idempotency_key: 'k-1' }),
    ).toEqual({
      pathParameters: { reference: 'ORD-1' },
      body: { status: 'shipped' },
      idempotencyKey: 'k-1',
    });
    expect(tool('publish_page').toRequest({ external_id: 'pg-1', idempotency_key: 'k-2' })).toEqual({
      pathParameters: { external_id: 'pg-1' },
      idempotencyKey: 'k-2',
    });
  });

  it('refuses a missing or empty idempotency_key with idempotency_key_required naming the argument', () => {
    for (const args of [{}, { idempotency_key: '' }, { idempotency_key: '  ' }]) {
      const refused = tool('publish_page').toRequest({ external_id: 'pg-1', ...args });
      expect(refused).toMatchObject({ kind: 'refused', code: 'idempotency_key_required', field: 'idempotency_key' });
      expect(isRefused(refused) && refused.message).toContain('idempotency_key argument');
    }
    expect(
      tool('set_order_status').toRequest({ reference: 'R', status: 'shipped', idempotency_key: 'x'.repeat(256) }),
    ).toMatchObject({
      kind: 'refused',
      code: 'validation_failed',
      field: 'idempotency_key',
    });
  });

  it('sends ids of the contract alphabet as they are and encodes anything else', () => {
    expect(pathSegment('ORD-1.a_b:c')).toBe('ORD-1.a_b:c');
    expect(pathSegment('a/b c')).toBe('a%2Fb%20c');
  });
});

describe('MCP tool results', () => {
  it('carries the document as text and as structured content', () => {
    expect(toolResult(200, { data: { id: 1 } })).toEqual({
      content: [{ type: 'text', text: '{"data":{"id":1}}' }],
      structuredContent: { data: { id: 1 } },
    });
  });

  it('marks an error status as a tool error and names the argument the caller sent', () => {
    const result = toolResult(
      422,
      { code: 'validation_failed', message: 'filter[name]: too long', field: 'filter[name]' },
      { 'filter[name]': 'filter_name' },
    );
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      code: 'validation_failed',
      message: 'filter_name: too long',
      field: 'filter_name',
    });
    expect(
      toolResult(422, {
        code: 'idempotency_key_reused',
        message: 'This Idempotency-Key was already used.',
        field: 'Idempotency-Key',
      }).structuredContent,
    ).toEqual({
      code: 'idempotency_key_reused',
      message: 'This idempotency_key was already used.',
      field: 'idempotency_key',
    });
  });
});
