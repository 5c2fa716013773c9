import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { baseUrl, storeWithKey } from '#fixtures/api.ts';
import { seedProduct } from '#fixtures/catalog.ts';

/**
 * The protocol revisions served (docs/mcp.md#protocol-revisions): `initialize` negotiates them
 * as the SDK does. A client of the v1 SDK gets 2025-11-25, an older client the revision it asks
 * for, and a client asking for a revision the server does not serve gets 2025-11-25 to accept or
 * leave.
 */
const mcpUrl = () => new URL(`${baseUrl()}/mcp`);
const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close().catch(() => undefined)));
});

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
    expect((await mcp.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'get_product',
      'get_product_by_external_id',
      'list_events',
      'list_product_checksums',
      'list_products',
    ]);
    const result = (await mcp.callTool({ name: 'list_products', arguments: {} })) as any;
    expect(result.structuredContent.data.map((p: { name: string }) => p.name)).toEqual(['Revision lamp']);
  });

  it('negotiates 2025-06-18 with a client that asks for it, and answers 2025-11-25 to one asking for 2026-07-28', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    expect(await negotiated(key.token, '2025-06-18')).toBe('2025-06-18');
    expect(await negotiated(key.token, '2026-07-28')).toBe('2025-11-25');
  });
});
