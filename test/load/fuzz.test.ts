import { newContext } from '#shared/context.ts';
import { describe, expect, it } from 'vitest';
import { baseUrl, createKey, createStore } from '#fixtures/api.ts';
import { placeOrder } from '#fixtures/orders.ts';
import { insertTestPage, storeItems } from '#fixtures/content.ts';
import { queryAll } from '#db/core/helpers.ts';
import { tableName } from '#db/core/client.ts';
import { ABILITIES } from '#domain/key/abilities.ts';

/**
 * Issue 12's sweep: 1,000 generated hostile requests (seeded, so every run sends the same ones)
 * across every write endpoint and every MCP tool — nesting, sizes, encodings, control characters,
 * prototype keys, duplicate keys, numbers at the edges, odd headers and query strings. No answer
 * may be a 5xx or carry a stack trace, and no refused request may leave a write behind: every
 * record a request names by a fresh external id exists afterwards exactly when it was answered 2xx.
 */
const SEED = 0x5eed12;
const HTTP_REQUESTS = 650;
const MCP_REQUESTS = 350;
const PER_KEY = 55; // of the 60 per minute
const PARALLEL = 10;

function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = rng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** JSON value texts (raw, so that `1e999`, `-0` and duplicate keys survive serialization). */
const STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFFy',
  '\u202Eevil',
  '\u2066x',
  '\u200B',
  '\u200B\uFEFF',
  '\u3164',
  'x'.repeat(300),
  'x'.repeat(70_000),
  '😀'.repeat(64),
  '<script>alert(1)</script>',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  '%00',
  '\r\n',
  '\t',
  'раid',
  'PAİD',
  'pai\u0301d',
  'paid',
  'processing',
  'published',
  'ok',
  'Oak bench',
  'https://127.0.0.1/a.png',
  'javascript:alert(1)',
  '\u001b[31m',
  'e\u0301',
  '\uFFFF',
  '\u0085',
].map((s) => JSON.stringify(s));
const NUMBERS = [
  '0',
  '-0',
  '-1',
  '1',
  '1.5',
  '1e308',
  '-1e308',
  '1e999',
  '-1e999',
  '1e21',
  '9007199254740993',
  '1000000000000',
  '1000000000001',
  '1e-7',
  '0.1',
  '123456789012345678901234567890',
];
const SCALARS = [
  ...STRINGS,
  ...NUMBERS,
  'null',
  'true',
  'false',
  '[]',
  '{}',
  '[[[]]]',
  '{"__proto__":{"polluted":1}}',
  '["a","a"]',
];

function value(depth = 0): string {
  const r = random();
  if (depth < 3 && r < 0.08)
    return `[${Array.from({ length: Math.floor(random() * 4) }, () => value(depth + 1)).join(',')}]`;
  if (depth < 3 && r < 0.14) return object(['a', '__proto__', 'constructor'], depth + 1);
  if (r < 0.17) return '['.repeat(40) + ']'.repeat(40);
  return pick(SCALARS);
}

/** An object over `fields` plus hostile keys, sometimes with a key twice. */
function object(fields: readonly string[], depth = 0): string {
  const keys = fields.filter(() => random() < 0.7);
  if (random() < 0.3)
    keys.push(pick(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '', 'x'.repeat(200)]));
  if (random() < 0.2 && keys.length) keys.push(pick(keys)); // duplicate key
  return `{${keys.map((k) => `${JSON.stringify(k)}:${value(depth)}`).join(',')}}`;
}

const PRODUCT = [
  'name',
  'price',
  'quantity',
  'sku',
  'description',
  'status',
  'image_url',
  'category_external_ids',
  'tag_external_ids',
];

/** The body bytes: mostly an object of the endpoint's fields, sometimes broken on the wire. */
function bodyBytes(fields: readonly string[]): Uint8Array | string {
  const r = random();
  const text = object(fields);
  if (r < 0.05)
    return Buffer.concat([
      Buffer.from(text.slice(0, -1)),
      Buffer.from([pick([0x80, 0xc0, 0xff, 0xed])]),
      Buffer.from('}'),
    ]);
  if (r < 0.08) return '\uFEFF' + text;
  if (r < 0.11) return text.slice(0, Math.floor(text.length / 2));
  if (r < 0.13) return `{"name":${'['.repeat(5000)}${']'.repeat(5000)}}`;
  if (r < 0.15) return pick(['null', '[]', '"x"', '1', '', ' ', '{}{}', '{"a":1}garbage']);
  return text;
}

const HEADERS: Record<string, string>[] = [
  {},
  { 'Content-Type': 'text/plain' },
  { 'Content-Type': 'application/json; charset=latin1' },
  { Accept: 'text/html' },
  { 'Idempotency-Key': ' ' },
  { 'Idempotency-Key': '"open' },
  { 'Idempotency-Key': 'x'.repeat(300) },
  { 'Idempotency-Key': '\u00e9t\u00e9' },
  { 'X-Forwarded-Proto': 'javascript' },
  { 'X-Forwarded-Host': 'evil.example' },
  { Origin: 'https://evil.example' },
  { 'Content-Encoding': 'gzip' },
];
const QUERIES = [
  '',
  '',
  '',
  '?include=offers',
  '?include=x',
  '?limit=-1',
  '?__proto__=1',
  '?%E0%A4%A=1',
  '?include=offers&include=offers',
  `?q=${'x'.repeat(2000)}`,
];

interface Sent {
  method: string;
  path: string;
  keyId: number;
  /** The record a fresh external id names, read back afterwards. */
  creates?: { kind: 'product' | 'category' | 'tag' | 'page'; xid: string };
}

function expectClean(status: number, text: string, what: string) {
  expect(status, what).toBeLessThan(500);
  expect(text, what).not.toMatch(/\n\s+at |node_modules|internal_error/);
}

describe('fuzz: generated hostile requests', () => {
  it(`answers ${HTTP_REQUESTS + MCP_REQUESTS} hostile requests without a 5xx, a stack trace or a partial write`, {
    timeout: 600_000,
  }, async () => {
    const storeId = await createStore();
    const keys: { id: number; token: string }[] = [];
    const total = HTTP_REQUESTS + MCP_REQUESTS;
    for (let i = 0; i < Math.ceil(total / PER_KEY); i++) keys.push(await createKey(storeId, ABILITIES));
    const order = await placeOrder(storeId);
    const page = await insertTestPage(storeId, keys[0]!.id);
    const outcomes: { sent: Sent; status: number }[] = [];
    const orderStatuses = new Set<string>(['pending']);
    const pageStatuses = new Set<string>(['draft']);

    const httpRequest = (n: number, key: { id: number; token: string }) => {
      const xid = `fz-${n}`;
      const choice: { method: string; path: string; fields: readonly string[]; creates?: Sent['creates'] } = pick([
        () => ({
          method: 'PUT',
          path: `/catalog/products/${xid}`,
          fields: PRODUCT,
          creates: { kind: 'product' as const, xid },
        }),
        () => ({ method: 'PATCH', path: `/catalog/products/${xid}`, fields: PRODUCT }),
        () => ({ method: 'POST', path: '/catalog/products/batch', fields: ['items', 'mode'] }),
        () => ({
          method: 'PUT',
          path: `/catalog/categories/${xid}`,
          fields: ['name'],
          creates: { kind: 'category' as const, xid },
        }),
        () => ({
          method: 'PUT',
          path: `/catalog/tags/${xid}`,
          fields: ['value'],
          creates: { kind: 'tag' as const, xid },
        }),
        () => ({ method: 'POST', path: `/orders/${order.reference}/status`, fields: ['status'] }),
        () => ({
          method: 'PUT',
          path: `/content/pages/${xid}`,
          fields: ['type', 'title', 'slug', 'body'],
          creates: { kind: 'page' as const, xid },
        }),
        () => ({ method: 'POST', path: `/content/pages/${page.external_id}/publish`, fields: ['x'] }),
        () => ({ method: 'POST', path: `/content/pages/${page.external_id}/unpublish`, fields: [] }),
      ])();
      return {
        sent: { method: choice.method, path: choice.path, keyId: key.id, creates: choice.creates },
        url: baseUrl() + choice.path + pick(QUERIES),
        headers: {
          'Content-Type': 'application/json',
          'Idempotency-Key': `fz-${n}`,
          ...pick(HEADERS),
          Authorization: `Bearer ${key.token}`,
        },
        body: bodyBytes(choice.fields),
      };
    };

    const TOOLS: [string, readonly string[]][] = [
      ['list_products', ['limit', 'page', 'filter_name', 'filter_sku', 'include_offers']],
      ['get_product', ['id']],
      ['get_product_by_external_id', ['external_id', 'include_offers']],
      ['upsert_product', ['external_id', ...PRODUCT]],
      ['update_product', ['external_id', ...PRODUCT]],
      ['upsert_products', ['items', 'mode']],
      ['upsert_category', ['external_id', 'name']],
      ['upsert_tag', ['external_id', 'value']],
      ['list_orders', ['limit', 'cursor', 'updated_since']],
      ['set_order_status', ['reference', 'status', 'idempotency_key']],
      ['list_pages', ['type', 'limit', 'cursor', 'version']],
      ['save_page', ['external_id', 'type', 'title', 'slug', 'body']],
      ['publish_page', ['external_id', 'idempotency_key']],
      ['unpublish_page', ['external_id']],
      ['list_events', ['cursor', 'limit', 'types', 'exclude_own']],
      ['list_product_checksums', ['cursor', 'limit']],
      ['adjust_stock', ['external_id', 'delta', 'sku', 'expected_quantity', 'idempotency_key']],
    ];
    const mcpRequest = (n: number, key: { id: number; token: string }) => {
      const [tool, fields] = pick(TOOLS);
      const args = random() < 0.1 ? pick(['"x"', '[1]', 'null', '5']) : object(fields);
      const name = random() < 0.05 ? pick(['5', 'null', '"no_such_tool"', '"__proto__"']) : JSON.stringify(tool);
      const text = `{"jsonrpc":"2.0","id":${n},"method":"tools/call","params":{"name":${name},"arguments":${args}}}`;
      const body =
        random() < 0.05
          ? Buffer.concat([Buffer.from(text.slice(0, 40)), Buffer.from([0xff]), Buffer.from(text.slice(40))])
          : text;
      return {
        sent: { method: 'POST', path: `/mcp ${tool}`, keyId: key.id },
        url: `${baseUrl()}/mcp`,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(random() < 0.1 ? { Origin: 'https://evil.example' } : {}),
          Authorization: `Bearer ${key.token}`,
        },
        body,
      };
    };

    const plan = Array.from({ length: total }, (_, n) => {
      const key = keys[Math.floor(n / PER_KEY)]!;
      return n < HTTP_REQUESTS ? httpRequest(n, key) : mcpRequest(n, key);
    });
    for (let i = 0; i < plan.length; i += PARALLEL) {
      await Promise.all(
        plan.slice(i, i + PARALLEL).map(async (req) => {
          const res = await fetch(req.url, { method: req.sent.method, headers: req.headers, body: req.body });
          const text = await res.text();
          const what = `${req.sent.method} ${req.sent.path} → ${res.status} ${text.slice(0, 200)}`;
          expectClean(res.status, text, what);
          if (res.status === 200 && req.sent.path.endsWith('/status')) orderStatuses.add(JSON.parse(text).data.status);
          if (res.status === 200 && /\/(un)?publish$/.test(req.sent.path))
            pageStatuses.add(JSON.parse(text).data.status);
          outcomes.push({ sent: req.sent, status: res.status });
        }),
      );
    }
    expect(outcomes).toHaveLength(total);
    expect(outcomes.filter((o) => o.status === 429)).toHaveLength(0);

    // Read the state back: a fresh external id exists exactly when its request succeeded.
    const exists = new Set<string>();
    for (const key of keys) {
      const items = await queryAll(newContext(), {
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `KEY#${key.id}` },
        ConsistentRead: true,
      });
      for (const item of items as { sk: string }[]) {
        const m = /^(?:XID#(product)|(CATEGORY)|(TAG))#?(.*)$/.exec(item.sk);
        if (m) exists.add(`${key.id}:${(m[1] ?? m[2] ?? m[3])!.toLowerCase()}:${m[4]}`);
      }
    }
    for (const p of await storeItems(storeId, 'PAGE#')) exists.add(`${p.owner_key_id}:page:${p.external_id}`);
    for (const { sent, status } of outcomes.filter((o) => o.sent.creates)) {
      const id = `${sent.keyId}:${sent.creates!.kind}:${sent.creates!.xid}`;
      expect(exists.has(id), `${sent.method} ${sent.path} answered ${status}`).toBe(status < 300);
    }
    const orders = await storeItems(storeId, 'ORDER#');
    expect(orderStatuses).toContain(orders.find((o) => o.reference === order.reference)!.status);
    const pages = await storeItems(storeId, 'PAGE#');
    expect(pageStatuses).toContain(pages.find((p) => p.external_id === page.external_id)!.status);
  });
});
