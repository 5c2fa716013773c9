/**
 * `npm run bench`: latency and DynamoDB cost per request, measured on the local stack.
 *
 * Starts its own in-memory stack (DynamoDB Local + gateway), seeds a store with BENCH_PRODUCTS
 * products (default 2000) and BENCH_ORDERS orders, then runs each scenario BENCH_REQUESTS times
 * (default 100) sequentially, spreading requests over many keys so the 60/min limit never bites.
 * Prints p50/p95 latency and the DynamoDB round trips and capacity units per request, as counted
 * by the SDK middleware in shared/db/client.ts (authorizer + handler together). Latency on
 * DynamoDB Local is no forecast of AWS latency; round trips and units are what carry over.
 * Then synthesizes the CDK app (BENCH_SYNTH=false reuses cdk.out) and prints each Lambda's bundle
 * size and import time (bench/bundles.ts). Run it on an idle machine: timings share the CPU.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
process.env.LOG_LEVEL ??= 'warn';
import { createServer } from 'node:net';
import { startLocalStack } from '../shared/local/stack.ts';
import { API_ROUTES } from '../shared/http/api-routes.ts';
import { bundleTable, measureBundles } from './bundles.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 2000);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 500);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const BATCH = 100;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

type Sample = { ms: number; calls: number; rcu: number; wcu: number; status: number; ops: string };
let samples: Sample[] = [];

const stack = await startLocalStack({
  port: 0,
  dynamodbPort: await freePort(),
  dataDir: null,
  tableName: 'bench',
  env: { LOG_LEVEL: 'warn' },
  gateway: { onRequest: (r) => samples.push({ ms: r.ms, calls: r.calls, rcu: r.rcu, wcu: r.wcu, status: r.status, ops: r.ops.join(',') }) },
});

const { handler: admin } = await import('../functions/admin/handler.ts');
const { insertProduct } = await import('../shared/db/product.repo.ts');
const { insertOrder } = await import('../shared/db/order.repo.ts');
const { computeTotals } = await import('../shared/domain/order/order.ts');

async function adminRun<T>(command: string, args: Record<string, unknown>): Promise<T> {
  const out = await admin({ command, args });
  if (!out.ok) throw new Error(`${command}: ${out.error.message}`);
  return out.data as T;
}

try {
  process.stdout.write(`seeding ${PRODUCTS} products and ${ORDERS} orders...\n`);
  await adminRun('stores create', { id: 'bench', name: 'Bench', currency: 'EUR' });
  const now = new Date().toISOString();
  const words = ['Oak', 'Walnut', 'Linen', 'Brass', 'Nordic', 'Rattan', 'Velvet', 'Maple'];
  for (let i = 1; i <= PRODUCTS; i++) {
    await insertProduct({
      store_id: 'bench',
      external_id: null,
      owner_key_id: null,
      name: `${words[i % words.length]} item ${i}`,
      description: 'bench',
      status: 'active',
      image_url: null,
      category_ids: [],
      category_external_ids: [],
      tag_external_ids: [],
      offers: Array.from({ length: i % 5 === 0 ? 3 : 1 }, (_, v) => ({
        sku: `B-${i}-${v}`,
        price: 1000 + i,
        quantity: 5,
        properties: [],
        weight: 1,
        length: 1,
        height: 1,
        width: 1,
      })),
      created_at: now,
      updated_at: now,
    });
  }
  for (let i = 1; i <= ORDERS; i++) {
    const t = computeTotals([{ product_id: 1, offer_id: 1, sku: 'B-1-0', name: 'x', quantity: 1, price: 1000 }], 0, 0);
    await insertOrder({
      store_id: 'bench',
      reference: `B-${i}`,
      status: 'paid',
      currency_code: 'EUR',
      customer: { name: 'n', email: 'e@example.com', phone: null },
      items: t.items,
      subtotal: t.subtotal,
      shipping_total: 0,
      discount_total: 0,
      total: t.total,
      paid_total: t.total,
      created_at: now,
      updated_at: now,
    });
  }
  // Each request i of a scenario uses key i mod 60: a replay or a publish comes from the key that
  // made the first request (idempotency and external ids are per key), and no key nears 60/min.
  const keys: string[] = [];
  for (let i = 0; i < 60; i++) {
    keys.push((await adminRun<{ token: string }>('keys create', { store: 'bench', name: `k${i}`, abilities: 'catalog:read,catalog:write,orders:read,orders:write-status,content:read,content:write' })).token);
  }
  const keyFor = (i: number) => keys[i % keys.length] as string;
  let pollSince = new Date().toISOString();

  const has = (method: string, path: string) => API_ROUTES.some((r) => r.method === method && r.path === path);
  /** `items`: the request writes that many products, and its row shows the cost per item. */
  type Scenario = { name: string; method: string; path: (i: number) => string; body?: (i: number) => unknown; headers?: (i: number) => Record<string, string>; items?: number; requests?: number };
  const scenarios: Scenario[] = [
    { name: 'GET /products (page 1, limit 15)', method: 'GET', path: () => '/products' },
    { name: 'GET /products?page=50&limit=30&include=offers', method: 'GET', path: () => '/products?page=50&limit=30&include=offers' },
    { name: 'GET /products?filter[name]=walnut', method: 'GET', path: () => '/products?filter%5Bname%5D=walnut' },
    { name: 'GET /products?filter[sku]=…', method: 'GET', path: (i) => `/products?filter%5Bsku%5D=B-${(i % PRODUCTS) + 1}-0` },
    { name: 'GET /products/{id}', method: 'GET', path: (i) => `/products/${(i % PRODUCTS) + 1}` },
  ];
  if (has('PUT', '/catalog/products/{external_id}')) {
    scenarios.push(
      { name: 'PUT /catalog/products/{xid} (create)', method: 'PUT', path: (i) => `/catalog/products/bench-${i}`, body: (i) => ({ name: `Bench ${i}`, price: 1000, sku: `BN-${i}` }) },
      { name: 'PUT /catalog/products/{xid} (replace)', method: 'PUT', path: (i) => `/catalog/products/bench-${i}`, body: (i) => ({ name: `Bench ${i} v2`, price: 1200, sku: `BN-${i}` }) },
      { name: 'PATCH /catalog/products/{xid}', method: 'PATCH', path: (i) => `/catalog/products/bench-${i}`, body: () => ({ quantity: 7 }) },
    );
  }
  if (has('POST', '/catalog/products/batch')) {
    const batch = (i: number, version: string) =>
      Array.from({ length: BATCH }, (_, j) => ({ external_id: `bulk-${i}-${j}`, name: `Bulk ${i}-${j}${version}`, price: 1000, sku: `BK-${i}-${j}` }));
    const requests = Math.max(1, Math.ceil(REQUESTS / 10));
    scenarios.push(
      { name: `POST /catalog/products/batch (${BATCH} creates), per item`, method: 'POST', path: () => '/catalog/products/batch', body: (i) => ({ items: batch(i, '') }), items: BATCH, requests },
      { name: `POST /catalog/products/batch (${BATCH} replaces), per item`, method: 'POST', path: () => '/catalog/products/batch', body: (i) => ({ items: batch(i, ' v2') }), items: BATCH, requests },
      { name: `POST /catalog/products/batch (${BATCH} patches), per item`, method: 'POST', path: () => '/catalog/products/batch', body: (i) => ({ mode: 'patch', items: batch(i, '').map(({ external_id }) => ({ external_id, quantity: 7 })) }), items: BATCH, requests },
    );
  }
  if (has('GET', '/orders')) {
    scenarios.push(
      { name: 'GET /orders?cursor=…&limit=50', method: 'GET', path: (i) => `/orders?cursor=${(i * 7) % ORDERS}&limit=50` },
      { name: 'GET /orders?updated_since=(store start: every order, full re-sync)', method: 'GET', path: () => `/orders?updated_since=${encodeURIComponent(now)}` },
    );
  }
  if (has('POST', '/orders/{reference}/status')) {
    scenarios.push(
      {
        name: 'POST /orders/{ref}/status (change)',
        method: 'POST',
        path: (i) => {
          // The common sync poll below asks for what changed during the last 10 of these.
          if (i === REQUESTS - 10) pollSince = new Date().toISOString();
          return `/orders/B-${i + 1}/status`;
        },
        body: () => ({ status: 'processing' }),
        headers: (i) => ({ 'Idempotency-Key': `bench-${i}` }),
      },
      { name: 'POST /orders/{ref}/status (replay)', method: 'POST', path: (i) => `/orders/B-${i + 1}/status`, body: () => ({ status: 'processing' }), headers: (i) => ({ 'Idempotency-Key': `bench-${i}` }) },
      { name: 'GET /orders?updated_since=… (common poll: 10 of 500 changed)', method: 'GET', path: () => `/orders?updated_since=${encodeURIComponent(pollSince)}` },
    );
  }

  if (has('PUT', '/content/pages/{external_id}')) {
    scenarios.push(
      { name: 'PUT /content/pages/{xid} (create)', method: 'PUT', path: (i) => `/content/pages/page-${i}`, body: (i) => ({ type: 'blog', title: `Post ${i}`, slug: `post-${i}`, body: '<p>Hello <strong>world</strong></p>' }) },
      { name: 'POST /content/pages/{xid}/publish', method: 'POST', path: (i) => `/content/pages/page-${i}/publish`, headers: (i) => ({ 'Idempotency-Key': `pub-${i}` }) },
      { name: 'GET /content/pages?type=blog&limit=50', method: 'GET', path: () => '/content/pages?type=blog&limit=50' },
    );
  }

  // Warm every key once (a cold container reads the token item before its first conditional write).
  for (const key of keys) await fetch(`${stack.baseUrl}/products/1`, { headers: { Authorization: `Bearer ${key}` } });

  const rows: string[] = [];
  const pct = (xs: number[], p: number) => xs.sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
  for (const s of scenarios) {
    samples = [];
    for (let i = 0; i < (s.requests ?? REQUESTS); i++) {
      const res = await fetch(stack.baseUrl + s.path(i), {
        method: s.method,
        headers: { Authorization: `Bearer ${keyFor(i)}`, Accept: 'application/json', 'Content-Type': 'application/json', ...s.headers?.(i) },
        body: s.body ? JSON.stringify(s.body(i)) : undefined,
      });
      await res.arrayBuffer();
    }
    const bad = samples.filter((x) => x.status >= 300).length;
    const avg = (f: (x: Sample) => number) => (samples.reduce((a, x) => a + f(x), 0) / samples.length / (s.items ?? 1)).toFixed(2);
    const opsMode = Object.entries(samples.reduce<Record<string, number>>((m, x) => ((m[x.ops] = (m[x.ops] ?? 0) + 1), m), {})).sort((a, b) => b[1] - a[1])[0]?.[0];
    rows.push(
      `| ${s.name} | ${pct(samples.map((x) => x.ms), 50).toFixed(1)} | ${pct(samples.map((x) => x.ms), 95).toFixed(1)} | ${avg((x) => x.calls)} | ${avg((x) => x.rcu)} | ${avg((x) => x.wcu)} | ${opsMode} |${bad ? ` ${bad} non-2xx` : ''}`,
    );
  }
  process.stdout.write(
    `\n${PRODUCTS} products, ${ORDERS} orders, ${REQUESTS} sequential requests per scenario, warm keys (auth + handler counted together)\n\n` +
      '| scenario | p50 ms | p95 ms | DynamoDB calls | RCU | WCU | calls (most common) |\n|---|---|---|---|---|---|---|\n' +
      rows.join('\n') +
      '\n',
  );
} finally {
  await stack.stop();
}
// After the stack is down, so the import timings do not share the CPU with DynamoDB Local.
process.stdout.write(bundleTable(measureBundles({ synth: process.env.BENCH_SYNTH !== 'false' })));
