import { describe, expect, it } from 'vitest';
import { baseUrl, storeWithKey } from '#fixtures/api.ts';
import { idemKey, placeOrder, statusPath } from '#fixtures/orders.ts';
import { idem, insertTestPage, publishPath } from '#fixtures/content.ts';

/**
 * Issue 12: hostile request bodies, text and HTTP conventions, each fault through real HTTP.
 * (The generated sweep across every write endpoint and tool is fuzz.test.ts.)
 */
const deep = (levels: number, inner = '"processing"') => '['.repeat(levels) + inner + ']'.repeat(levels);

/** A raw request: bytes as given, no client-side JSON. */
async function raw(
  method: string,
  path: string,
  token: string | null,
  body?: string | Uint8Array,
  headers: Record<string, string> = {},
) {
  const res = await fetch(baseUrl() + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers },
    body,
  });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, body: json };
}

const mcpCall = (id: number, name: string, args: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;

describe('deeply nested bodies', () => {
  it('answers 400 invalid_json to a 20,000-deep status on POST /orders/{ref}/status and leaves the order as it was', async () => {
    const { storeId, key, client: api } = await storeWithKey(['orders:read', 'orders:write-status']);
    const order = await placeOrder(storeId);
    const res = await raw('POST', statusPath(order.reference), key.token, `{"status":${deep(20_000)}}`, {
      'Idempotency-Key': idemKey(),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'invalid_json', message: expect.stringContaining('deeper'), field: null });
    const list = await api.get('/orders');
    expect(list.body.data.find((o: any) => o.reference === order.reference).status).toBe('pending');
  });

  it('answers 400 invalid_json to a deep body on POST /content/pages/{xid}/publish and leaves the page a draft', async () => {
    const { storeId, key, client: api } = await storeWithKey(['content:read', 'content:write']);
    const page = await insertTestPage(storeId, key.id);
    const res = await raw('POST', publishPath(page.external_id), key.token, `{"x":${deep(20_000, '1')}}`, {
      'Idempotency-Key': idem(),
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    const list = await api.get('/content/pages');
    expect(list.body.data.find((p: any) => p.external_id === page.external_id).status).toBe('draft');
  });

  it('answers 400 invalid_json to a deep PUT product body and stores nothing', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const res = await raw(
      'PUT',
      '/catalog/products/deep-1',
      key.token,
      `{"name":"x","price":1,"description":${deep(40, '"x"')}}`,
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    expect((await api.get('/products')).body.total).toBe(0);
  });

  it('accepts a body nested up to the limit and judges it on its fields (422, not 400)', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const res = await raw(
      'PUT',
      '/catalog/products/deep-2',
      key.token,
      `{"name":"x","price":1,"description":${deep(31, '"x"')}}`,
    );
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_failed', field: 'description' });
  });

  it('answers 400 to a deep set_order_status call over MCP and leaves the order as it was', async () => {
    const { storeId, key, client: api } = await storeWithKey(['orders:read', 'orders:write-status']);
    const order = await placeOrder(storeId);
    const args = `{"reference":"${order.reference}","idempotency_key":"${idemKey()}","status":${deep(20_000)}}`;
    const res = await raw('POST', '/mcp', key.token, mcpCall(1, 'set_order_status', args), {
      Accept: 'application/json, text/event-stream',
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
    expect((await api.get('/orders')).body.data.find((o: any) => o.reference === order.reference).status).toBe(
      'pending',
    );
  });
});

describe('bodies that are not UTF-8', () => {
  // "Oak" + a lone continuation byte + "bench": not UTF-8 anywhere.
  const invalid = Buffer.concat([Buffer.from('{"name":"Oak'), Buffer.from([0x80]), Buffer.from(' bench","price":1}')]);

  it('answers 400 invalid_json to invalid UTF-8 in a PUT body and stores nothing', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const res = await raw('PUT', '/catalog/products/bytes-1', key.token, invalid);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'invalid_json', message: expect.stringContaining('UTF-8'), field: null });
    expect((await api.get('/products')).body.total).toBe(0);
  });

  it('answers 400 invalid_json to an overlong encoding (0xC0 0xAF for "/")', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const body = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xc0, 0xaf]), Buffer.from('","price":1}')]);
    expect((await raw('PUT', '/catalog/products/bytes-2', key.token, body)).status).toBe(400);
  });

  it('stores valid multi-byte UTF-8 as sent', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const res = await raw(
      'PUT',
      '/catalog/products/bytes-3',
      key.token,
      Buffer.from('{"name":"Eiche – Bank 😀","price":1}'),
    );
    expect(res.status).toBe(200);
    expect(res.body.data.name).toBe('Eiche – Bank 😀');
  });

  it('answers 400 to invalid UTF-8 in an MCP message', async () => {
    const { key } = await storeWithKey(['catalog:write']);
    const body = Buffer.concat([
      Buffer.from(mcpCall(1, 'upsert_product', '{"external_id":"b-1","name":"Oak')),
      Buffer.from([0xff]),
      Buffer.from('","price":1}}'),
    ]);
    const res = await raw('POST', '/mcp', key.token, body, { Accept: 'application/json, text/event-stream' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_json');
  });
});

describe('text hygiene: one rule set for every plain text field', () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ['a NUL in a product name', '/catalog/products/t-1', { name: 'Oak\u0000bench', price: 1 }, 'name'],
    ['a lone surrogate in a product name', '/catalog/products/t-2', { name: 'Oak \uD800', price: 1 }, 'name'],
    [
      'a bidi override in a description',
      '/catalog/products/t-3',
      { name: 'Oak', price: 1, description: 'cheap \u202Eevil' },
      'description',
    ],
    [
      'a NUL in a description',
      '/catalog/products/t-4',
      { name: 'Oak', price: 1, description: 'a\u0000b' },
      'description',
    ],
    ['a control character in a sku', '/catalog/products/t-5', { name: 'Oak', price: 1, sku: 'A\u0007B' }, 'sku'],
    ['a zero-width-only sku', '/catalog/products/t-6', { name: 'Oak', price: 1, sku: '\u200B\u200B' }, 'sku'],
    ['a zero-width-only product name', '/catalog/products/t-7', { name: '\u200B\u2060\uFEFF', price: 1 }, 'name'],
    ['a zero-width-only category name', '/catalog/categories/c-1', { name: '\u200B\u200C' }, 'name'],
    ['a bidi isolate in a category name', '/catalog/categories/c-2', { name: 'Chairs\u2067' }, 'name'],
    ['a lone surrogate in a tag value', '/catalog/tags/g-1', { value: 'sale\uDC00' }, 'value'],
    ['a tab in a tag value', '/catalog/tags/g-2', { value: 'sale\tnow' }, 'value'],
  ];
  it.each(cases)('answers 422 validation_failed to %s and stores nothing', async (_what, path, body, field) => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const res = await api.put(path, body);
    expect(res.status).toBe(422);
    expect(res.body).toEqual({ code: 'validation_failed', message: expect.any(String), field });
    expect((await api.get('/products')).body.total).toBe(0);
  });

  it('stores text NFC-normalized and keeps line breaks in a description', async () => {
    const { client: api } = await storeWithKey(['catalog:write']);
    const res = await api.put('/catalog/products/nfc-1', {
      name: 'Cafe\u0301 chair',
      price: 1,
      description: 'Line 1\nLine 2\tend',
    });
    expect(res.status).toBe(200);
    expect(res.body.data.name).toBe('Caf\u00e9 chair');
    expect(res.body.data.description).toBe('Line 1\nLine 2\tend');
  });

  it('applies the same rules to a page title', async () => {
    const { client: api } = await storeWithKey(['content:write']);
    const res = await api.put('/content/pages/p-1', {
      type: 'page',
      title: 'About \u202Eus',
      slug: 'about-us',
      body: '',
    });
    expect(res.status).toBe(422);
    expect(res.body.field).toBe('title');
  });

  it.each([
    '\u0440\u0430id',
    'PA\u0130D',
    'pai\u0301d',
    'p\u0430\u0456d',
    '\u0455hipped',
    'dr\u0430ft',
    'SHIPPED\u0336',
  ])('refuses the look-alike status label %j with 422 reserved_tag_value', async (value) => {
    const { client: api } = await storeWithKey(['catalog:write']);
    const res = await api.put('/catalog/tags/look', { value });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'reserved_tag_value', field: 'value' });
  });

  it('still accepts a tag in another script that is no status label', async () => {
    const { client: api } = await storeWithKey(['catalog:write']);
    const res = await api.put('/catalog/tags/ru', {
      value: '\u0440\u0430\u0441\u043f\u0440\u043e\u0434\u0430\u0436\u0430',
    });
    expect(res.status).toBe(200);
  });
});

describe('401 challenges and the Bearer scheme', () => {
  it('answers a request without a key with WWW-Authenticate: Bearer, the resource metadata and no error code', async () => {
    const res = await raw('GET', '/products', null);
    expect(res.status).toBe(401);
    // The protected-resource metadata an OAuth client starts from (docs/oauth.md).
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+"$/);
    expect(res.body.code).toBe('unauthenticated');
  });

  it.each([
    ['an unknown key', 'Bearer sia_' + 'A'.repeat(43)],
    ['a malformed key', 'Bearer not-a-token'],
  ])('answers %s with error="invalid_token", on the API and on /mcp', async (_, header) => {
    for (const [method, path] of [
      ['GET', '/products'],
      ['POST', '/mcp'],
    ] as const) {
      const res = await raw(method, path, null, method === 'POST' ? '{}' : undefined, { Authorization: header });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata="[^"]+", error="invalid_token"/);
      expect(res.body).toEqual({ code: 'unauthenticated', message: expect.any(String), field: null });
    }
  });

  it('answers a revoked key with error="invalid_token"', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    await (await import('#fixtures/api.ts')).adminCommand('keys revoke', { id: key.id });
    const res = await raw('GET', '/products', null, undefined, { Authorization: `Bearer ${key.token}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('accepts BEARER and bearer on the API and on /mcp', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    expect((await raw('GET', '/products', null, undefined, { Authorization: `BEARER ${key.token}` })).status).toBe(200);
    const list = await raw('POST', '/mcp', null, '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}', {
      Authorization: `bearer ${key.token}`,
      Accept: 'application/json, text/event-stream',
    });
    expect(list.status).toBe(200);
    expect(list.body.result.tools.length).toBeGreaterThan(0);
  });
});

describe('HTTP methods: HEAD wherever GET works, 405 with Allow for a known path', () => {
  it.each([
    ['DELETE', '/products/1', 'GET, HEAD'],
    ['PUT', '/orders', 'GET, HEAD'],
    ['DELETE', '/catalog/products/x', 'GET, HEAD, PATCH, PUT'],
    ['PUT', '/catalog/products/batch', 'POST'],
    ['GET', '/orders/R-1/status', 'POST'],
    ['DELETE', '/content/pages/p-1', 'PUT'],
    ['DELETE', '/mcp', 'POST'],
    ['GET', '/mcp', 'POST'],
  ])('answers %s %s with 405 and Allow: %s, key or not', async (method, path, allow) => {
    const { key } = await storeWithKey(['catalog:read']);
    for (const token of [key.token, null]) {
      const res = await raw(method, path, token);
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.body).toEqual({ code: 'method_not_allowed', message: expect.stringContaining(allow), field: null });
    }
  });

  it('does not spend allowance on a 405', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    const before = Number((await api.get('/products')).headers.get('ratelimit-remaining'));
    await raw('DELETE', '/products/1', key.token);
    expect(Number((await api.get('/products')).headers.get('ratelimit-remaining'))).toBe(before - 1);
  });

  it('answers HEAD like GET without a body: status, RateLimit headers, the same checks', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read']);
    const list = await raw('HEAD', '/products', key.token);
    expect(list.status).toBe(200);
    expect(list.text).toBe('');
    expect(list.headers.get('content-type')).toContain('application/json');
    expect(list.headers.get('ratelimit-limit')).toBe('60');
    expect((await raw('HEAD', '/products/999999', key.token)).status).toBe(404);
    expect((await raw('HEAD', '/products', null)).status).toBe(401);
    expect((await raw('HEAD', '/orders', key.token)).status).toBe(403);
    expect(storeId).toBeTruthy();
  });
});

describe('MCP transport rules', () => {
  const accept = { Accept: 'application/json, text/event-stream' };
  const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}';

  it('refuses a foreign Origin with 403 and takes no allowance; no Origin and the own origin are fine', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    const foreign = await raw('POST', '/mcp', key.token, list, { ...accept, Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ code: 'forbidden', message: expect.stringContaining('Origin'), field: null });
    expect((await raw('POST', '/mcp', key.token, list, { ...accept, Origin: 'null' })).status).toBe(403);
    expect((await raw('POST', '/mcp', key.token, list, accept)).status).toBe(200);
    const own = new URL(baseUrl()).origin;
    expect((await raw('POST', '/mcp', key.token, list, { ...accept, Origin: own })).status).toBe(200);
    // The accepted tools/list requests are set-up (docs/mcp.md#rate-limit) and the refused ones took nothing: only this one counts.
    expect(Number((await api.get('/products')).headers.get('ratelimit-remaining'))).toBe(59);
  });

  it('names an unknown tool once, without a doubled "MCP error -32602:" prefix', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const res = await raw('POST', '/mcp', key.token, mcpCall(1, 'no_such_tool', '{}'), accept);
    expect(res.body.error.code).toBe(-32602);
    expect(res.body.error.message).toBe('Unknown tool: no_such_tool');
  });

  it.each([
    [
      'arguments as a string',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_products","arguments":"x"}}',
    ],
    [
      'arguments as an array',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_products","arguments":[1]}}',
    ],
    ['a numeric tool name', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{}}}'],
    ['a numeric list cursor', '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}'],
  ])('answers %s with -32602 invalid params, not -32603', async (_, body) => {
    const { key } = await storeWithKey(['catalog:read']);
    const res = await raw('POST', '/mcp', key.token, body, accept);
    expect(res.status).toBeLessThan(500);
    expect(res.body.error.code).toBe(-32602);
    expect(res.body.error.message).not.toMatch(/"code":|invalid_type|\[\s*\{/);
  });
});

describe('page links come from the API, not the client', () => {
  it('ignores a client Host, X-Forwarded-Proto and X-Forwarded-Host in path and page links', async () => {
    const { request } = await import('node:http');
    const { key } = await storeWithKey(['catalog:read']);
    const url = new URL(baseUrl() + '/products?limit=1');
    const body = await new Promise<any>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          headers: {
            Host: 'evil.example',
            'X-Forwarded-Proto': 'javascript',
            'X-Forwarded-Host': 'evil.example',
            Authorization: `Bearer ${key.token}`,
          },
        },
        (res) => {
          let text = '';
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve(JSON.parse(text)));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(body.path).toBe(`${baseUrl()}/products`);
    expect(JSON.stringify(body)).not.toContain('evil.example');
    expect(JSON.stringify(body)).not.toContain('javascript');
  });
});

describe('a 403 uses no allowance', () => {
  it('refuses a key lacking the ability without taking a rate-limit slot', async () => {
    const { client: api, key } = await storeWithKey(['catalog:read']);
    const first = Number((await api.get('/products')).headers.get('ratelimit-remaining'));
    for (let i = 0; i < 5; i++) {
      expect((await api.get('/orders')).status).toBe(403);
      expect((await api.put('/catalog/products/x', { name: 'x', price: 1 })).status).toBe(403);
    }
    expect(Number((await api.get('/products')).headers.get('ratelimit-remaining'))).toBe(first - 1);
    expect(key.id).toBeGreaterThan(0);
  });
});

describe('prototype names in the query string', () => {
  it.each(['__proto__', 'constructor'])('answers ?%s=1 as an unknown parameter (422), not a 500', async (name) => {
    const { client: api } = await storeWithKey(['catalog:read']);
    const res = await api.get(`/products?${name}=1`);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_failed', field: name });
  });
});
