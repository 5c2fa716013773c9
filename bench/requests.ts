/**
 * Latency and DynamoDB cost per request, by endpoint group: every scenario runs BENCH_REQUESTS
 * times (default 100) sequentially against a store of BENCH_PRODUCTS products (default 2000) and
 * BENCH_ORDERS orders (default 500), spread over 60 keys so the 60/min limit never bites. Latency
 * on DynamoDB Local is no forecast of AWS latency; round trips carry over exactly.
 */
import { createHash } from 'node:crypto';
import { API_BASE_PATH, API_ROUTES, type Group } from '#http/api-routes.ts';
import { type BenchStack, percentile, startBenchStack, type Sample } from './bench-stack.ts';
import { seedOrders, seedProducts } from './seed.ts';
import type { BenchSection } from './section.ts';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 2000);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 500);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const BATCH = 100;

type Scenario = {
  name: string;
  method: string;
  route: string;
  path: (i: number) => string;
  body?: (i: number) => unknown;
  headers?: (i: number) => Record<string, string>;
  /** Which of the bench's keys sends request i (default: i mod 60). */
  key?: (i: number) => number;
  /** The request writes that many products, and its row shows the cost per item. */
  items?: number;
  requests?: number;
};

/**
 * `etags`: the ETag of the last answer per path, as a client keeps it from its own last write and
 * sends it back with If-Match.
 */
function scenarios(since: { store: string; poll: string }, etags: Map<string, string>): Scenario[] {
  const batch = (i: number, version: string) =>
    Array.from({ length: BATCH }, (_, j) => ({
      external_id: `bulk-${i}-${j}`,
      name: `Bulk ${i}-${j}${version}`,
      price: 1000,
      sku: `BK-${i}-${j}`,
    }));
  const batchRequests = Math.max(1, Math.ceil(REQUESTS / 10));
  return [
    { name: 'GET /products (page 1, limit 15)', method: 'GET', route: '/products', path: () => '/products' },
    {
      name: 'GET /products?page=50&limit=30&include=offers',
      method: 'GET',
      route: '/products',
      path: () => '/products?page=50&limit=30&include=offers',
    },
    {
      name: 'GET /products?filter[name]=walnut',
      method: 'GET',
      route: '/products',
      path: () => '/products?filter%5Bname%5D=walnut',
    },
    {
      name: 'GET /products?filter[sku]=…',
      method: 'GET',
      route: '/products',
      path: (i) => `/products?filter%5Bsku%5D=B-${(i % PRODUCTS) + 1}-0`,
    },
    {
      name: 'GET /products/{id}',
      method: 'GET',
      route: '/products/{id}',
      path: (i) => `/products/${(i % PRODUCTS) + 1}`,
    },
    {
      name: 'PUT /catalog/products/{xid} (create)',
      method: 'PUT',
      route: '/catalog/products/{external_id}',
      path: (i) => `/catalog/products/bench-${i}`,
      body: (i) => ({ name: `Bench ${i}`, price: 1000, sku: `BN-${i}` }),
    },
    {
      name: 'PUT /catalog/products/{xid} (replace)',
      method: 'PUT',
      route: '/catalog/products/{external_id}',
      path: (i) => `/catalog/products/bench-${i}`,
      body: (i) => ({ name: `Bench ${i} v2`, price: 1200, sku: `BN-${i}` }),
    },
    {
      name: 'PATCH /catalog/products/{xid}',
      method: 'PATCH',
      route: '/catalog/products/{external_id}',
      path: (i) => `/catalog/products/bench-${i}`,
      body: () => ({ quantity: 7 }),
    },
    {
      name: 'POST /catalog/products/{xid}/stock (delta)',
      method: 'POST',
      route: '/catalog/products/{external_id}/stock',
      path: (i) => `/catalog/products/bench-${i}/stock`,
      body: () => ({ delta: -1 }),
      headers: (i) => ({ 'Idempotency-Key': `stock-${i}` }),
    },
    {
      name: "PUT /catalog/products/{xid} (If-Match: the last write's ETag)",
      method: 'PUT',
      route: '/catalog/products/{external_id}',
      path: (i) => `/catalog/products/bench-${i}`,
      body: (i) => ({ name: `Bench ${i} v3`, price: 1300, sku: `BN-${i}` }),
      headers: (i) => ({ 'If-Match': etags.get(`/catalog/products/bench-${i}/stock`) ?? '"none"' }),
    },
    {
      name: 'PUT /catalog/products/{xid} (If-None-Match: *, create only)',
      method: 'PUT',
      route: '/catalog/products/{external_id}',
      path: (i) => `/catalog/products/bench-new-${i}`,
      body: (i) => ({ name: `Bench new ${i}`, price: 1000, sku: `BNN-${i}` }),
      headers: () => ({ 'If-None-Match': '*' }),
    },
    {
      name: `POST /catalog/products/batch (${BATCH} creates), per item`,
      method: 'POST',
      route: '/catalog/products/batch',
      path: () => '/catalog/products/batch',
      body: (i) => ({ items: batch(i, '') }),
      items: BATCH,
      requests: batchRequests,
    },
    {
      name: `POST /catalog/products/batch (${BATCH} replaces), per item`,
      method: 'POST',
      route: '/catalog/products/batch',
      path: () => '/catalog/products/batch',
      body: (i) => ({ items: batch(i, ' v2') }),
      items: BATCH,
      requests: batchRequests,
    },
    {
      name: `POST /catalog/products/batch (${BATCH} patches), per item`,
      method: 'POST',
      route: '/catalog/products/batch',
      path: () => '/catalog/products/batch',
      body: (i) => ({ mode: 'patch', items: batch(i, '').map(({ external_id }) => ({ external_id, quantity: 7 })) }),
      items: BATCH,
      requests: batchRequests,
    },
    {
      // Keys 0 to 9 each created one batch above: a page of 100 of their own products.
      name: `GET /catalog/products/checksums?limit=${BATCH} (a full page), per item`,
      method: 'GET',
      route: '/catalog/products/checksums',
      path: () => `/catalog/products/checksums?limit=${BATCH}`,
      key: (i) => i % batchRequests,
      items: BATCH,
    },
    {
      name: 'GET /orders?cursor=…&limit=50',
      method: 'GET',
      route: '/orders',
      path: (i) => `/orders?cursor=${(i * 7) % ORDERS}&limit=50`,
    },
    {
      name: 'GET /orders?updated_since=(store start: every order, full re-sync)',
      method: 'GET',
      route: '/orders',
      path: () => `/orders?updated_since=${encodeURIComponent(since.store)}`,
    },
    {
      name: 'POST /orders/{ref}/status (change)',
      method: 'POST',
      route: '/orders/{reference}/status',
      path: (i) => {
        // The common sync poll below asks for what changed during the last 10 of these.
        if (i === REQUESTS - 10) since.poll = new Date().toISOString();
        return `/orders/B-${i + 1}/status`;
      },
      body: () => ({ status: 'processing' }),
      headers: (i) => ({ 'Idempotency-Key': `bench-${i}` }),
    },
    {
      name: 'POST /orders/{ref}/status (replay)',
      method: 'POST',
      route: '/orders/{reference}/status',
      path: (i) => `/orders/B-${i + 1}/status`,
      body: () => ({ status: 'processing' }),
      headers: (i) => ({ 'Idempotency-Key': `bench-${i}` }),
    },
    {
      name: 'GET /orders?updated_since=… (common poll: 10 of 500 changed)',
      method: 'GET',
      route: '/orders',
      path: () => `/orders?updated_since=${encodeURIComponent(since.poll)}`,
    },
    {
      name: 'PUT /content/pages/{xid} (create)',
      method: 'PUT',
      route: '/content/pages/{external_id}',
      path: (i) => `/content/pages/page-${i}`,
      body: (i) => ({
        type: 'blog',
        title: `Post ${i}`,
        slug: `post-${i}`,
        body: '<p>Hello <strong>world</strong></p>',
      }),
    },
    {
      name: 'PUT /content/pages/{xid} (update)',
      method: 'PUT',
      route: '/content/pages/{external_id}',
      path: (i) => `/content/pages/page-${i}`,
      body: (i) => ({
        type: 'blog',
        title: `Post ${i} v2`,
        slug: `post-${i}`,
        body: '<p>Hello <strong>world</strong></p>',
      }),
    },
    {
      name: 'POST /content/pages/{xid}/publish',
      method: 'POST',
      route: '/content/pages/{external_id}/publish',
      path: (i) => `/content/pages/page-${i}/publish`,
      headers: (i) => ({ 'Idempotency-Key': `pub-${i}` }),
    },
    {
      name: 'GET /content/pages?type=blog&limit=50',
      method: 'GET',
      route: '/content/pages',
      path: () => '/content/pages?type=blog&limit=50',
    },
  ];
}

function groupOf(s: Scenario): Group {
  const route = API_ROUTES.find((r) => r.method === s.method && r.path === s.route);
  if (!route) throw new Error(`bench scenario "${s.name}" names no route of API_ROUTES`);
  return route.group;
}

/** A request's calls in order, or counted per operation when there are too many to read. */
function describeOps(ops: string): string {
  const list = ops.split(',');
  if (list.length <= 6) return ops;
  const counts = new Map<string, number>();
  for (const op of list) counts.set(op, (counts.get(op) ?? 0) + 1);
  return [...counts].map(([op, n]) => `${op} ×${n}`).join(', ');
}

function row(s: { group: string; name: string; items?: number }, samples: Sample[]): string {
  const bad = samples.filter((x) => x.status >= 300).length;
  const avg = (f: (x: Sample) => number) =>
    (samples.reduce((a, x) => a + f(x), 0) / samples.length / (s.items ?? 1)).toFixed(2);
  const counts = samples.reduce<Record<string, number>>((m, x) => ((m[x.ops] = (m[x.ops] ?? 0) + 1), m), {});
  const commonOps = Object.entries(counts).sort((a, b) => b[1] - a[1])[0]?.[0];
  const ms = samples.map((x) => x.ms);
  return (
    `| ${s.group} | ${s.name} | ${percentile(ms, 50).toFixed(1)} | ${percentile(ms, 95).toFixed(1)} | ${avg((x) => x.calls)} | ${avg((x) => x.rcu)} | ${avg((x) => x.wcu)} | ${describeOps(commonOps ?? '')} |` +
    (bad ? ` ${bad} non-2xx` : '')
  );
}

const REDIRECT = 'http://127.0.0.1:9/callback';
/** A PKCE pair: any verifier of 43 characters and its S256 challenge. */
const pkce = (i: number) => {
  const verifier = `bench-verifier-${String(i).padStart(28, '0')}`;
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

/**
 * The OAuth endpoints an MCP host calls to connect, `flows` times, as in docs/oauth.md: register,
 * open the authorize page, the store admin approves (in-process, not an HTTP request), the page's
 * poll redeems the approval, the code is exchanged for tokens; then each flow's refresh token is
 * refreshed once. A row per endpoint, from the samples of its path only.
 */
async function oauthRows(bench: BenchStack, flows: number): Promise<string[]> {
  const root = bench.stack.baseUrl.slice(0, -API_BASE_PATH.length);
  const form = (body: Record<string, string>) =>
    fetch(`${root}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, string> }));
  const granted: { clientId: string; refreshToken: string }[] = [];
  bench.resetSamples();
  for (let i = 0; i < flows; i++) {
    const registered = await fetch(`${root}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: `Bench app ${i}`, redirect_uris: [REDIRECT] }),
    });
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    const { verifier, challenge } = pkce(i);
    const url = new URL(`${root}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      resource: `${bench.stack.baseUrl}/mcp`,
      scope: 'catalog:read orders:read',
    }))
      url.searchParams.set(k, v);
    const page = await (await fetch(url, { redirect: 'manual' })).text();
    const approvalCode = /id="approval-code" data-request="[^"]+">([^<]+)</.exec(page)?.[1];
    const poll = /fetch\("([^"]+)"/.exec(page)?.[1];
    if (!approvalCode || !poll) throw new Error(`bench: the authorize page of flow ${i} has no approval code`);
    await bench.admin('oauth approve', { code: approvalCode, store: bench.storeId });
    const done = (await (await fetch(new URL(poll, url))).json()) as { redirect?: string };
    const code = done.redirect ? new URL(done.redirect).searchParams.get('code') : null;
    if (!code) throw new Error(`bench: the poll of flow ${i} answered no code`);
    const tokens = await form({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: clientId,
    });
    if (tokens.status !== 200) throw new Error(`bench: code exchange of flow ${i}: ${tokens.status}`);
    granted.push({ clientId, refreshToken: tokens.body.refresh_token! });
  }
  const flowSamples = bench.samples();
  bench.resetSamples();
  for (const { clientId, refreshToken } of granted)
    await form({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
  const refreshes = bench.samples();
  const of = (path: string) => flowSamples.filter((x) => x.path === path);
  return [
    row({ group: 'oauth', name: 'POST /oauth/register' }, of('/oauth/register')),
    row({ group: 'oauth', name: 'GET /oauth/authorize' }, of('/oauth/authorize')),
    row({ group: 'oauth', name: 'GET /oauth/authorize/status (approved: redeems)' }, of('/oauth/authorize/status')),
    row({ group: 'oauth', name: 'POST /oauth/token (authorization_code)' }, of('/oauth/token')),
    row({ group: 'oauth', name: 'POST /oauth/token (refresh_token)' }, refreshes),
  ];
}

export const requestsSection: BenchSection = {
  name: 'requests',
  async run() {
    // The OAuth rows run their flows from one address: bounds far above what they send.
    const bench = await startBenchStack({
      storeId: 'bench',
      keys: 60,
      env: { OAUTH_REGISTRATIONS_PER_IP: '1000000', OAUTH_AUTHORIZATIONS_PER_IP: '1000000' },
    });
    try {
      const since = { store: new Date().toISOString(), poll: '' };
      await seedProducts(bench.storeId, PRODUCTS);
      await seedOrders(bench.storeId, ORDERS);
      await bench.namesIndexed();
      // Request i uses key i mod 60: a replay or a publish comes from the key that made the first
      // request (idempotency and external ids are per key), and no key nears 60/min.
      const tokenFor = (i: number) => bench.tokens[i % bench.tokens.length] as string;
      const rows: string[] = [];
      const etags = new Map<string, string>();
      for (const s of scenarios(since, etags)) {
        bench.resetSamples();
        for (let i = 0; i < (s.requests ?? REQUESTS); i++) {
          const path = s.path(i);
          const res = await fetch(bench.stack.baseUrl + path, {
            method: s.method,
            headers: {
              Authorization: `Bearer ${tokenFor(s.key?.(i) ?? i)}`,
              Accept: 'application/json',
              'Content-Type': 'application/json',
              ...s.headers?.(i),
            },
            body: s.body ? JSON.stringify(s.body(i)) : undefined,
          });
          await res.arrayBuffer();
          const etag = res.headers.get('etag');
          if (etag) etags.set(path, etag);
        }
        rows.push(row({ group: groupOf(s), name: s.name, items: s.items }, bench.samples()));
      }
      rows.push(...(await oauthRows(bench, Math.max(1, Math.ceil(REQUESTS / 5)))));
      return (
        `## DynamoDB round trips and units per request\n\n` +
        `${PRODUCTS} products, ${ORDERS} orders, ${REQUESTS} sequential requests per scenario (batch rows: ${Math.max(1, Math.ceil(REQUESTS / 10))} requests, figures per item; ` +
        `OAuth rows: ${Math.max(1, Math.ceil(REQUESTS / 5))} connections, each registered, authorized, approved, redeemed, exchanged and refreshed once), ` +
        `warm keys; the authorizer's call and the handler's calls, each counted in its request context by the SDK middleware in shared/db/core/client.ts, added up by the local gateway. ` +
        `Units are what DynamoDB Local reports: nothing for reads of missing items and failed conditional writes, and a flat figure per transaction ` +
        `(AWS charges 2 WCU per item per KB in a transaction; the per-topic docs work units out by DynamoDB's rules). ` +
        `Latency is DynamoDB Local on this machine and says little about AWS.\n\n` +
        '| group | scenario | p50 ms | p95 ms | DynamoDB calls | RCU | WCU | calls (most common) |\n|---|---|---|---|---|---|---|---|\n' +
        rows.join('\n') +
        '\n'
      );
    } finally {
      await bench.stop();
    }
  },
};
