import { afterEach, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { baseUrl, client, createKey, createStore, storeWithKey } from '#fixtures/api.ts';
import { seedProduct } from '#fixtures/catalog.ts';
import { snapshot } from '#fixtures/dry-run.ts';
import { useMcpV2Clients } from '#fixtures/mcp-client-v2.ts';

/**
 * The protocol revisions served (docs/mcp.md#protocol-revisions). A client of the official v2 SDK
 * negotiates 2026-07-28 through `server/discover` (no initialize; every request carries its
 * revision and capabilities); a client of the v1 SDK gets 2025-11-25 through initialize, an older
 * client the revision it asks for. The same guarantees hold on each: the key's abilities pick the
 * tools, results carry structuredContent (which the v2 client checks against the tool's
 * outputSchema) with their untrusted values marked, dry runs write nothing, read-only keys get the
 * reads only.
 */
const mcpUrl = () => new URL(`${baseUrl()}/mcp`);
const connectV2 = useMcpV2Clients('mcp-revisions-v2-test');
const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
});

type Result = CallToolResult & { structuredContent: any };
const READ_TOOLS = [
  'get_product',
  'get_product_by_external_id',
  'list_events',
  'list_product_checksums',
  'list_products',
];

/** A POST of one 2026-07-28 request as the v2 SDK client sends it: the envelope in `_meta`, the revision and method in headers. */
function modernPost(token: string, method: string, params: Record<string, unknown> = {}): Promise<Response> {
  return fetch(mcpUrl(), {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...(typeof params.name === 'string' ? { 'Mcp-Name': params.name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'revisions-test', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
}

/** The revision the server answers an initialize asking for `asked`. */
async function negotiated(token: string, asked: string): Promise<string> {
  const res = await fetch(mcpUrl(), {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'revisions-test', version: '1' } },
    }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { protocolVersion: string } }).result.protocolVersion;
}

describe('MCP protocol revisions', () => {
  it('serves a v2 SDK client on 2026-07-28: the tools its key may use, and a read with its document marked', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read']);
    await seedProduct(storeId, { name: 'Revision lamp' });
    const mcp = await connectV2(key.token);
    expect(mcp.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(mcp.getProtocolEra()).toBe('modern');
    const tools = (await mcp.listTools()).tools;
    expect(tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
    for (const tool of tools) {
      expect(tool.outputSchema).toMatchObject({ type: 'object' });
      expect(tool.annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    }
    const result = (await mcp.callTool({ name: 'list_products', arguments: {} })) as Result;
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.data.map((p: { name: string }) => p.name)).toEqual(['Revision lamp']);
    expect(result.structuredContent.untrusted_fields).toContain('data[].name');
    expect((result.content[0] as { text: string }).text).toMatch(
      /<untrusted-data-[0-9a-f]{12}>Revision lamp<\/untrusted-data-[0-9a-f]{12}>/,
    );
  });

  it('answers server/discover with 2026-07-28, the tools capability and the instructions', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const mcp = await connectV2(key.token);
    const discovered = await mcp.discover();
    // The revisions that take no handshake; the 2025 ones are reached through initialize (below).
    expect(discovered.supportedVersions).toEqual(['2026-07-28']);
    expect(discovered.capabilities.tools).toBeDefined();
    expect(discovered.instructions).toMatch(/untrusted/);
  });

  it('runs a v2 SDK client write, its dry run first (nothing written), and refuses a tool the key lacks', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read', 'catalog:write']);
    const mcp = await connectV2(key.token);
    expect(mcp.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const upsert = (await mcp.listTools()).tools.find((t) => t.name === 'upsert_product')!;
    expect(upsert.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    expect(upsert.outputSchema).toMatchObject({ type: 'object' });
    const args = { external_id: 'v2-oak', name: 'Oak table', price: 49000 };
    const before = await snapshot(storeId, key.id);
    const dry = (await mcp.callTool({ name: 'upsert_product', arguments: { ...args, dry_run: true } })) as Result;
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({ dry_run: true, result: 'would_create', data: { name: 'Oak table' } });
    expect(await snapshot(storeId, key.id)).toEqual(before);
    const written = (await mcp.callTool({ name: 'upsert_product', arguments: args })) as Result;
    expect(written.isError).toBeFalsy();
    expect(written.structuredContent).toMatchObject({ data: { external_id: 'v2-oak', name: 'Oak table' } });
    const read = await client(key.token).get('/catalog/products/v2-oak');
    expect(read.body.data).toMatchObject({ name: 'Oak table' });
    const refused = (await mcp.callTool({ name: 'list_orders', arguments: {} })) as Result;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'forbidden', field: null });
  });

  it('gives a read-only key on 2026-07-28 the read tools only and refuses its writes', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read', 'catalog:write'], { mcp: 'read-only' });
    const mcp = await connectV2(key.token);
    expect(mcp.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect((await mcp.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
    const refused = (await mcp.callTool({
      name: 'upsert_tag',
      arguments: { external_id: 't', value: 'x' },
    })) as Result;
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'forbidden' });
  });

  it('counts a 2026-07-28 tool call against the allowance shared with HTTP, and server/discover and tools/list not', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const discovered = await modernPost(key.token, 'server/discover');
    expect(discovered.status).toBe(200);
    expect(((await discovered.json()) as any).result.supportedVersions).toEqual(['2026-07-28']);
    expect((await modernPost(key.token, 'tools/list')).status).toBe(200);
    const call = await modernPost(key.token, 'tools/call', { name: 'list_products', arguments: {} });
    expect(call.status).toBe(200);
    // The first request of the key's 60 a minute: set-up used none of them.
    expect(call.headers.get('ratelimit-limit')).toBe('60');
    expect(call.headers.get('ratelimit-remaining')).toBe('59');
    expect(((await call.json()) as any).result.structuredContent).toMatchObject({ data: [] });
  });

  it('refuses subscriptions/listen on 2026-07-28 with -32601 in a JSON body instead of holding an event stream open', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const res = await modernPost(key.token, 'subscriptions/listen', { filter: { toolsListChanged: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toMatchObject({ id: 1, error: { code: -32601 } });
  });

  it('serves a v1 SDK client on 2025-11-25: it lists the tools of its key and calls one', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read']);
    await seedProduct(storeId, { name: 'Revision lamp' });
    const mcp = new Client({ name: 'mcp-revisions-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(mcpUrl(), {
      requestInit: { headers: { Authorization: `Bearer ${key.token}` } },
    });
    await mcp.connect(transport);
    open.push(mcp);
    expect(transport.protocolVersion).toBe('2025-11-25');
    expect((await mcp.listTools()).tools.map((t) => t.name).sort()).toEqual(READ_TOOLS);
    const result = (await mcp.callTool({ name: 'list_products', arguments: {} })) as any;
    expect(result.structuredContent.data.map((p: { name: string }) => p.name)).toEqual(['Revision lamp']);
  });

  it('negotiates 2025-06-18 through initialize with a client that asks for it, and 2025-11-25 with one asking for 2026-07-28', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    expect(await negotiated(key.token, '2025-06-18')).toBe('2025-06-18');
    // initialize is the 2025 handshake: 2026-07-28 takes none, so a client that sends one gets the newest 2025 revision.
    expect(await negotiated(key.token, '2026-07-28')).toBe('2025-11-25');
  });
});
