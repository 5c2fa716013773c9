import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { baseUrl, client, createKey, createStore, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { seedProduct } from '#fixtures/catalog.ts';
import { idemKey, placeOrder, statusPath } from '#fixtures/orders.ts';
import { ABILITIES, type Ability } from '#domain/key/abilities.ts';
import { bindTools, mayUse } from '#functions/mcp/server.ts';

/**
 * The MCP endpoint through the official SDK client against the real local gateway.
 * Budget: connecting costs nothing of the key's allowance (initialize, the initialized
 * notification and tools/list are set-up; the client's GET for an SSE stream is a 405), each tool call one.
 */
const mcpUrl = () => `${baseUrl()}/mcp`;
const open: Client[] = [];

async function connect(token: string): Promise<Client> {
  const mcp = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await mcp.connect(transport);
  open.push(mcp);
  return mcp;
}

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function call(mcp: Client, name: string, args: Record<string, unknown> = {}) {
  return (await mcp.callTool({ name, arguments: args })) as CallToolResult & { structuredContent: any };
}

/**
 * The text content is structuredContent with the untrusted values marked (docs/mcp.md); the
 * document returned is the endpoint's, without the markers (`untrusted_fields`, `more_available`).
 */
function documentOf(result: CallToolResult & { structuredContent: any }) {
  expect(result.content).toHaveLength(1);
  const first = result.content[0] as { type: string; text: string };
  expect(first.type).toBe('text');
  expect(JSON.parse(first.text.replace(/<\/?untrusted-data-[0-9a-f]{12}>/g, ''))).toEqual(result.structuredContent);
  if (result.isError) return result.structuredContent;
  expect(Array.isArray(result.structuredContent.untrusted_fields)).toBe(true);
  const { untrusted_fields: _u, more_available: _m, ...doc } = result.structuredContent;
  return doc;
}

function expectToolError(
  result: CallToolResult & { structuredContent: any },
  code: string,
  field: string | null = null,
) {
  expect(result.isError).toBe(true);
  const doc = documentOf(result);
  expectErrorShape(doc);
  expect(doc).toMatchObject({ code, field });
  return doc;
}

/** A raw JSON-RPC POST, for what the SDK client hides (status codes, headers). */
function rawPost(token: string | null, body: string | object, headers: Record<string, string> = {}) {
  return fetch(mcpUrl(), {
    method: 'POST',
    headers: {
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const listToolsMessage = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

/** The tools whose endpoint and route function exist today, by the abilities of that endpoint. */
function toolsFor(abilities: readonly Ability[]): string[] {
  return [...bindTools().values()]
    .filter((b) => mayUse(abilities, b))
    .map((b) => b.tool.name)
    .sort();
}

describe('MCP: connecting and listing tools', () => {
  it('initializes over stateless Streamable HTTP without a session id', async () => {
    const { key } = await storeWithKey();
    const mcp = await connect(key.token);
    expect(mcp.getServerVersion()).toMatchObject({ name: 'store-integration-api' });
    expect(mcp.getServerCapabilities()?.tools).toBeDefined();
    expect(mcp.getInstructions()).toContain('minor units');
    expect(
      (open.at(-1) as unknown as { transport: StreamableHTTPClientTransport }).transport.sessionId,
    ).toBeUndefined();
  });

  it('shows a catalog:read key exactly list_products, get_product, get_product_by_external_id, list_product_checksums and list_events', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const mcp = await connect(key.token);
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'get_product',
      'get_product_by_external_id',
      'list_events',
      'list_product_checksums',
      'list_products',
    ]);
    const list = tools.find((t) => t.name === 'list_products')!;
    expect(list.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(Object.keys(list.inputSchema.properties ?? {}).sort()).toEqual([
      'filter_name',
      'filter_sku',
      'include_offers',
      'limit',
      'page',
    ]);
    expect(list.annotations).toMatchObject({ readOnlyHint: true });
    expect(list.description).toContain('catalog:read');
  });

  it.each(ABILITIES.map((a) => [a]))('shows a %s key only the tools of that ability', async (ability) => {
    const { key } = await storeWithKey([ability]);
    const mcp = await connect(key.token);
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(toolsFor([ability]));
  });

  it('shows a key holding every ability every tool whose endpoint exists', async () => {
    const { key } = await storeWithKey();
    const mcp = await connect(key.token);
    const names = (await mcp.listTools()).tools.map((t) => t.name).sort();
    expect(names).toEqual(toolsFor(ABILITIES));
    expect(names).toEqual(
      expect.arrayContaining([
        'get_product',
        'list_orders',
        'list_products',
        'set_order_status',
        'update_product',
        'upsert_category',
        'upsert_product',
        'upsert_tag',
      ]),
    );
    for (const t of (await mcp.listTools()).tools) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.description).toBeTruthy();
    }
  });

  it('lists tools in one request of JSON, not SSE, and carries the rate-limit headers', async () => {
    const { key } = await storeWithKey(['orders:read']);
    const res = await rawPost(key.token, listToolsMessage);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('ratelimit-limit')).toBe('60');
    expect(res.headers.get('ratelimit-remaining')).toBe('60');
    const body = (await res.json()) as any;
    expect(body.result.tools.map((t: { name: string }) => t.name)).toEqual(['list_orders', 'list_events']);
  });
});

describe('MCP: catalog tools', () => {
  let storeId: string;
  let token: string;
  beforeAll(async () => {
    const s = await storeWithKey();
    storeId = s.storeId;
    token = s.key.token;
    for (let i = 1; i <= 4; i++)
      await seedProduct(storeId, {
        name: i % 2 ? `Oak chair ${i}` : `Linen cushion ${i}`,
        offers: [{ sku: `SKU-${i}`, price: 1000 * i, quantity: i }],
      });
  });

  it('list_products returns the same document as GET /products, links included', async () => {
    const mcp = await connect(token);
    const result = await call(mcp, 'list_products', { limit: 2, filter_name: 'oak', include_offers: true });
    expect(result.isError).toBeFalsy();
    const doc = documentOf(result);
    const http = await client(token).get('/products?limit=2&filter[name]=oak&include=offers');
    expect(http.status).toBe(200);
    expect(doc).toEqual(http.body);
    expect(doc).toMatchObject({ total: 2, per_page: 2, current_page: 1 });
    expect(doc.path).toBe(`${baseUrl()}/products`);
    expect(doc.data[0].offers).toBeDefined();
  });

  it('get_product returns {data: product} and not_found for an unknown id', async () => {
    const mcp = await connect(token);
    const doc = documentOf(await call(mcp, 'get_product', { id: 3 }));
    expect(doc).toEqual((await client(token).get('/products/3')).body);
    expect(doc.data).toMatchObject({ id: 3, name: 'Oak chair 3' });
    expectToolError(await call(mcp, 'get_product', { id: 999 }), 'not_found');
  });

  it('upsert_product creates a product that GET /products then shows, and replaces it on repeat', async () => {
    const { key } = await storeWithKey();
    const mcp = await connect(key.token);
    documentOf(await call(mcp, 'upsert_category', { external_id: 'cat-1', name: 'Chairs' }));
    documentOf(await call(mcp, 'upsert_tag', { external_id: 'tag-1', value: 'Summer' }));
    const created = documentOf(
      await call(mcp, 'upsert_product', {
        external_id: 'p-1',
        name: 'Tool chair',
        price: 4900,
        sku: 'TC-1',
        quantity: 3,
        category_external_ids: ['cat-1'],
        tag_external_ids: ['tag-1'],
      }),
    );
    expect(created.data).toMatchObject({
      id: 1,
      external_id: 'p-1',
      name: 'Tool chair',
      category_external_ids: ['cat-1'],
      tag_external_ids: ['tag-1'],
      min_price: 4900,
    });
    const listed = await client(key.token).get('/products');
    expect(listed.body.total).toBe(1);
    expect(listed.body.data[0]).toMatchObject({ id: 1, name: 'Tool chair', sku: 'TC-1', quantity: 3 });
    const again = documentOf(
      await call(mcp, 'upsert_product', { external_id: 'p-1', name: 'Tool chair v2', price: 5000 }),
    );
    expect(again.data).toMatchObject({ id: 1, name: 'Tool chair v2', quantity: 0, category_external_ids: [] });
    // Read back by the same external id: the document the write answered.
    expect(documentOf(await call(mcp, 'get_product_by_external_id', { external_id: 'p-1' }))).toEqual(again);
    // The key's checksums: the one its write answered, by the same external id.
    expect(documentOf(await call(mcp, 'list_product_checksums', { limit: 10 }))).toMatchObject({
      data: [{ id: 1, external_id: 'p-1', checksum: again.data.checksum, updated_at: again.data.updated_at }],
      next_cursor: null,
    });
    expectToolError(
      await call(mcp, 'get_product_by_external_id', { external_id: 'never' }),
      'not_found',
      'external_id',
    );
  });

  it('update_product changes only the supplied fields and is not_found for an unknown external id', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const mcp = await connect(key.token);
    documentOf(await call(mcp, 'upsert_product', { external_id: 'p-2', name: 'Lamp', price: 1200, quantity: 7 }));
    const patched = documentOf(await call(mcp, 'update_product', { external_id: 'p-2', price: 1500 }));
    expect(patched.data).toMatchObject({ name: 'Lamp', min_price: 1500, quantity: 7 });
    expectToolError(await call(mcp, 'update_product', { external_id: 'nope', price: 1 }), 'not_found');
  });

  it("answers the endpoints' validation errors as tool errors naming the field, and writes nothing", async () => {
    const { key } = await storeWithKey(['catalog:write', 'catalog:read']);
    const mcp = await connect(key.token);
    expectToolError(
      await call(mcp, 'upsert_product', { external_id: 'p-3', name: 'Bad', price: -1 }),
      'validation_failed',
      'price',
    );
    expectToolError(
      await call(mcp, 'upsert_product', { external_id: 'p-3', name: 'Bad', price: 1, colour: 'red' }),
      'validation_failed',
      'colour',
    );
    expectToolError(
      await call(mcp, 'upsert_product', {
        external_id: 'p-3',
        name: 'Bad',
        price: 1,
        category_external_ids: ['missing'],
      }),
      'unknown_reference',
      'category_external_ids[0]',
    );
    expectToolError(
      await call(mcp, 'upsert_product', {
        external_id: 'p-3',
        name: 'Bad',
        price: 1,
        image_url: 'http://10.0.0.1/a.png',
      }),
      'invalid_image_url',
      'image_url',
    );
    expectToolError(
      await call(mcp, 'upsert_product', { external_id: 'bad id!', name: 'Bad', price: 1 }),
      'validation_failed',
      'external_id',
    );
    expectToolError(await call(mcp, 'upsert_product', { name: 'Bad', price: 1 }), 'validation_failed', 'external_id');
    expectToolError(
      await call(mcp, 'upsert_tag', { external_id: 't-1', value: ' Paid ' }),
      'reserved_tag_value',
      'value',
    );
    expect(documentOf(await call(mcp, 'list_products', {})).total).toBe(0);
  });

  it('answers wrong argument types and bounds as tool errors naming the argument', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const mcp = await connect(key.token);
    expectToolError(await call(mcp, 'list_products', { page: '2' }), 'validation_failed', 'page');
    expectToolError(await call(mcp, 'list_products', { limit: 51 }), 'validation_failed', 'limit');
    expectToolError(await call(mcp, 'list_products', { limit: 1.5 }), 'validation_failed', 'limit');
    const long = expectToolError(
      await call(mcp, 'list_products', { filter_name: 'x'.repeat(256) }),
      'validation_failed',
      'filter_name',
    );
    expect(long.message).not.toContain('filter[name]');
    expectToolError(await call(mcp, 'list_products', { include_offers: 'yes' }), 'validation_failed', 'include_offers');
    expectToolError(await call(mcp, 'list_products', { sort: 'name' }), 'validation_failed', 'sort');
    expectToolError(await call(mcp, 'get_product', {}), 'validation_failed', 'id');
  });
});

describe('MCP: orders tools', () => {
  it('list_orders returns the same document as GET /orders', async () => {
    const { storeId, key } = await storeWithKey(['orders:read']);
    await placeOrder(storeId);
    await placeOrder(storeId);
    const mcp = await connect(key.token);
    const doc = documentOf(await call(mcp, 'list_orders', { limit: 1 }));
    expect(doc).toEqual((await client(key.token).get('/orders?limit=1')).body);
    expect(doc.next_cursor).toBe(doc.data[0].id);
    expectToolError(
      await call(mcp, 'list_orders', { updated_since: 'yesterday' }),
      'validation_failed',
      'updated_since',
    );
  });

  it('set_order_status changes the status once; a replay with the same idempotency_key returns the first result', async () => {
    const { storeId, key } = await storeWithKey(['orders:read', 'orders:write-status']);
    const order = await placeOrder(storeId);
    const mcp = await connect(key.token);
    const k = idemKey();
    const first = await call(mcp, 'set_order_status', {
      reference: order.reference,
      status: 'processing',
      idempotency_key: k,
    });
    expect(documentOf(first).data).toMatchObject({ reference: order.reference, status: 'processing' });
    documentOf(
      await call(mcp, 'set_order_status', {
        reference: order.reference,
        status: 'shipped',
        idempotency_key: idemKey(),
      }),
    );
    const replay = await call(mcp, 'set_order_status', {
      reference: order.reference,
      status: 'processing',
      idempotency_key: k,
    });
    expect(replay.content).toEqual(first.content);
    expect(replay.isError).toBeFalsy();
    const reused = expectToolError(
      await call(mcp, 'set_order_status', { reference: order.reference, status: 'cancelled', idempotency_key: k }),
      'idempotency_key_reused',
      'idempotency_key',
    );
    expect(reused.message).toContain('idempotency_key');
    const now = await client(key.token).get('/orders');
    expect(now.body.data[0].status).toBe('shipped');
  });

  it('shares the idempotency scope with POST /orders/{reference}/status', async () => {
    const { storeId, key } = await storeWithKey(['orders:write-status']);
    const order = await placeOrder(storeId);
    const k = idemKey();
    const http = await client(key.token).post(
      statusPath(order.reference),
      { status: 'cancelled' },
      { 'Idempotency-Key': k },
    );
    expect(http.status).toBe(200);
    const mcp = await connect(key.token);
    const result = await call(mcp, 'set_order_status', {
      reference: order.reference,
      status: 'cancelled',
      idempotency_key: k,
    });
    expect(documentOf(result)).toEqual(JSON.parse(http.text));
  });

  it('refuses set_order_status without idempotency_key, and leaves the order as it was', async () => {
    const { storeId, key } = await storeWithKey(['orders:read', 'orders:write-status']);
    const order = await placeOrder(storeId);
    const mcp = await connect(key.token);
    const err = expectToolError(
      await call(mcp, 'set_order_status', { reference: order.reference, status: 'processing' }),
      'idempotency_key_required',
      'idempotency_key',
    );
    expect(err.message).toContain('idempotency_key');
    expectToolError(
      await call(mcp, 'set_order_status', { reference: order.reference, status: 'processing', idempotency_key: '' }),
      'idempotency_key_required',
      'idempotency_key',
    );
    expectToolError(
      await call(mcp, 'set_order_status', { reference: order.reference, status: 'processing', idempotency_key: 42 }),
      'validation_failed',
      'idempotency_key',
    );
    expect((await client(key.token).get('/orders')).body.data[0].status).toBe('pending');
  });

  it("applies the endpoint's rules: paid is not allowed, a forbidden move is invalid_transition, an unknown order not_found", async () => {
    const { storeId, key } = await storeWithKey(['orders:write-status']);
    const order = await placeOrder(storeId);
    const mcp = await connect(key.token);
    expectToolError(
      await call(mcp, 'set_order_status', { reference: order.reference, status: 'paid', idempotency_key: idemKey() }),
      'status_not_allowed',
      'status',
    );
    expectToolError(
      await call(mcp, 'set_order_status', {
        reference: order.reference,
        status: 'delivered',
        idempotency_key: idemKey(),
      }),
      'invalid_transition',
      'status',
    );
    expectToolError(
      await call(mcp, 'set_order_status', {
        reference: 'NO-SUCH-ORDER',
        status: 'processing',
        idempotency_key: idemKey(),
      }),
      'not_found',
    );
  });
});

describe('MCP: content tools', () => {
  const page = {
    type: 'page',
    title: 'About us',
    slug: 'about-us',
    body: '<p>Hello <script>alert(1)</script><b>there</b></p>',
  };

  it('save_page saves a sanitized draft; publish_page publishes once under an idempotency_key; unpublish_page takes it down', async () => {
    const { key } = await storeWithKey(['content:read', 'content:write']);
    const mcp = await connect(key.token);
    const saved = documentOf(await call(mcp, 'save_page', { external_id: 'pg-1', ...page }));
    expect(saved.data).toMatchObject({ external_id: 'pg-1', status: 'draft', slug: 'about-us', published_at: null });
    expect(saved.data.body).not.toContain('script');
    const k = idemKey();
    const published = await call(mcp, 'publish_page', { external_id: 'pg-1', idempotency_key: k });
    expect(documentOf(published).data).toMatchObject({ status: 'published', published_at: expect.any(String) });
    const replay = await call(mcp, 'publish_page', { external_id: 'pg-1', idempotency_key: k });
    expect(replay.content).toEqual(published.content);
    expectToolError(
      await call(mcp, 'publish_page', { external_id: 'pg-1' }),
      'idempotency_key_required',
      'idempotency_key',
    );
    expect(documentOf(await call(mcp, 'unpublish_page', { external_id: 'pg-1' })).data.status).toBe('unpublished');
    const listed = documentOf(await call(mcp, 'list_pages', { type: 'page', limit: 10 }));
    expect(listed).toEqual((await client(key.token).get('/content/pages?type=page&limit=10')).body);
    expect(listed.data.map((p: { external_id: string }) => p.external_id)).toEqual(['pg-1']);
  });

  it('shares the idempotency scope with POST /content/pages/{external_id}/publish', async () => {
    const { key } = await storeWithKey(['content:write']);
    const mcp = await connect(key.token);
    documentOf(await call(mcp, 'save_page', { external_id: 'pg-scope', ...page, slug: 'scope' }));
    const k = idemKey();
    const viaTool = await call(mcp, 'publish_page', { external_id: 'pg-scope', idempotency_key: k });
    const viaHttp = await client(key.token).post('/content/pages/pg-scope/publish', undefined, {
      'Idempotency-Key': k,
    });
    expect(viaHttp.status).toBe(200);
    expect(JSON.parse(viaHttp.text)).toEqual(documentOf(viaTool));
    const reused = await client(key.token).post(
      '/content/pages/pg-scope/publish',
      { force: true },
      { 'Idempotency-Key': k },
    );
    expect(reused.body).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('answers the content rules as tool errors: bad slug, slug taken, unpublishing a draft, unknown page', async () => {
    const { key } = await storeWithKey(['content:write']);
    const mcp = await connect(key.token);
    expectToolError(
      await call(mcp, 'save_page', { external_id: 'pg-2', ...page, slug: 'Not A Slug' }),
      'validation_failed',
      'slug',
    );
    documentOf(await call(mcp, 'save_page', { external_id: 'pg-2', ...page }));
    expectToolError(await call(mcp, 'save_page', { external_id: 'pg-3', ...page }), 'slug_taken', 'slug');
    expectToolError(await call(mcp, 'unpublish_page', { external_id: 'pg-2' }), 'invalid_transition');
    expectToolError(await call(mcp, 'publish_page', { external_id: 'nope', idempotency_key: idemKey() }), 'not_found');
    expectToolError(await call(mcp, 'list_pages', {}), 'forbidden');
  });
});

describe('MCP: access', () => {
  it('refuses a tool the key lacks the ability for, naming the ability', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const mcp = await connect(key.token);
    const err = expectToolError(
      await call(mcp, 'upsert_product', { external_id: 'p-1', name: 'X', price: 1 }),
      'forbidden',
    );
    expect(err.message).toContain('catalog:write');
    expectToolError(
      await call(mcp, 'set_order_status', { reference: 'R-1', status: 'processing', idempotency_key: 'k' }),
      'forbidden',
    );
  });

  it('answers an unknown tool with a JSON-RPC invalid-params error', async () => {
    const { key } = await storeWithKey();
    const mcp = await connect(key.token);
    const err = await mcp.callTool({ name: 'drop_tables', arguments: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
  });

  it('answers 401 in the contract shape without a key or with an unknown one', async () => {
    for (const token of [null, 'sia_' + 'x'.repeat(43)]) {
      const res = await rawPost(token, listToolsMessage);
      expect(res.status).toBe(401);
      const body = (await res.json()) as any;
      expectErrorShape(body);
      expect(body.code).toBe('unauthenticated');
    }
    await expect(connect('sia_' + 'y'.repeat(43))).rejects.toMatchObject({ code: 401 });
  });

  it('shares the rate limit with HTTP: a key that used its 60 requests over HTTP gets 429 for a tool call, still lists tools', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read']);
    const api = client(key.token);
    const answers = await Promise.all(Array.from({ length: 60 }, () => api.get('/products')));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    const listed = await rawPost(key.token, listToolsMessage);
    expect(listed.status).toBe(200);
    expect(listed.headers.get('ratelimit-remaining')).toBe('0');
    const res = await rawPost(key.token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'list_products', arguments: {} },
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const body = (await res.json()) as any;
    expectErrorShape(body);
    expect(body.code).toBe('rate_limited');
  });

  it("counts MCP tool calls against the key's allowance, and set-up not", async () => {
    const { key } = await storeWithKey(['catalog:read']);
    expect((await rawPost(key.token, listToolsMessage)).headers.get('ratelimit-remaining')).toBe('60');
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    expect((await rawPost(key.token, initialize)).headers.get('ratelimit-remaining')).toBe('60');
    expect((await rawPost(key.token, { jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
    const called = await rawPost(key.token, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'list_products', arguments: {} },
    });
    expect(called.headers.get('ratelimit-remaining')).toBe('59');
    expect((await client(key.token).get('/products')).headers.get('ratelimit-remaining')).toBe('58');
  });
});

describe('MCP: transport', () => {
  it('answers GET /mcp with 405 (no SSE stream in stateless mode)', async () => {
    const { key } = await storeWithKey();
    const res = await fetch(mcpUrl(), {
      headers: { Accept: 'text/event-stream', Authorization: `Bearer ${key.token}` },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expectErrorShape(await res.json());
  });

  it('answers malformed JSON with a JSON-RPC parse error and a body over 1 MiB with 413', async () => {
    const { key } = await storeWithKey();
    const bad = await rawPost(key.token, '{"jsonrpc": ');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.code).toBe(ErrorCode.ParseError);
    // JSON, but not a JSON-RPC message: an invalid request (JSON-RPC -32600), as the v2 SDK answers it.
    for (const body of ['null', '"tools/call"', '{"jsonrpc": "2.0", "id": 1}']) {
      const notMessage = await rawPost(key.token, body);
      expect(notMessage.status, body).toBe(400);
      expect(((await notMessage.json()) as any).error, body).toMatchObject({
        code: ErrorCode.InvalidRequest,
        message: expect.stringContaining('not a valid JSON-RPC message'),
      });
    }
    const big = await rawPost(key.token, { ...listToolsMessage, params: { pad: 'x'.repeat(1024 * 1024) } });
    expect(big.status).toBe(413);
    expect(((await big.json()) as any).code).toBe('payload_too_large');
  });

  it('keeps no state between requests: tools/call works without initialize', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read']);
    await seedProduct(storeId, { name: 'Stateless stool' });
    const res = await rawPost(key.token, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'get_product', arguments: { id: 1 } },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.id).toBe(7);
    expect(body.result.structuredContent.data.name).toBe('Stateless stool');
  });
});
