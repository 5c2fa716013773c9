/**
 * The endpoints the cost bench prices (bench/cost.ts): request i of a row uses key i mod 60, so a
 * publish or a status change comes from the key that made the page or owns the idempotency key.
 * `setup` runs once per request index before the row, unmeasured (the page a publish publishes).
 */
export interface CostScenario {
  /** Short name; docs/deploy.md's worked example refers to rows by it. */
  id: string;
  name: string;
  method: string;
  /** The route as API Gateway names the resource (the access log's `resource`). */
  route: string;
  path: (i: number) => string;
  body?: (i: number) => unknown;
  headers?: (i: number) => Record<string, string>;
  setup?: Pick<CostScenario, 'method' | 'path' | 'body' | 'headers'>;
}

const page = (i: number, title: string) => ({
  type: 'blog',
  title,
  slug: `cost-${i}`,
  body: `<p>Post ${i}: ${'Hello <strong>world</strong>. '.repeat(40)}</p>`,
});

export const COST_SCENARIOS: CostScenario[] = [
  {
    id: 'product-read',
    name: 'product read: GET /products/{id}',
    method: 'GET',
    route: '/v1/products/{id}',
    path: (i) => `/products/${(i % 2000) + 1}`,
  },
  {
    id: 'product-list',
    name: 'list page: GET /products (limit 15)',
    method: 'GET',
    route: '/v1/products',
    path: () => '/products',
  },
  {
    id: 'product-list-large',
    name: 'large list: GET /products?limit=50&include=offers',
    method: 'GET',
    route: '/v1/products',
    path: (i) => `/products?limit=50&include=offers&page=${(i % 5) + 1}`,
  },
  {
    id: 'search',
    name: 'search: GET /products?filter[name]=walnut',
    method: 'GET',
    route: '/v1/products',
    path: () => '/products?filter%5Bname%5D=walnut',
  },
  {
    id: 'product-create',
    name: 'product write: PUT /catalog/products/{xid} (create)',
    method: 'PUT',
    route: '/v1/catalog/products/{external_id}',
    path: (i) => `/catalog/products/cost-${i}`,
    body: (i) => ({ name: `Cost ${i}`, price: 1000, sku: `CO-${i}` }),
  },
  {
    id: 'product-write',
    name: 'product write: PUT /catalog/products/{xid} (replace)',
    method: 'PUT',
    route: '/v1/catalog/products/{external_id}',
    path: (i) => `/catalog/products/cost-${i}`,
    body: (i) => ({ name: `Cost ${i} v2`, price: 1200, sku: `CO-${i}` }),
  },
  {
    id: 'orders-poll',
    name: 'orders poll: GET /orders?updated_since=(a minute ago)',
    method: 'GET',
    route: '/v1/orders',
    path: () => `/orders?updated_since=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`,
  },
  {
    id: 'orders-list',
    name: 'orders list: GET /orders?limit=50',
    method: 'GET',
    route: '/v1/orders',
    path: (i) => `/orders?cursor=${(i * 7) % 400}&limit=50`,
  },
  {
    id: 'order-status',
    name: 'order status change: POST /orders/{ref}/status',
    method: 'POST',
    route: '/v1/orders/{reference}/status',
    path: (i) => `/orders/B-${i + 1}/status`,
    body: () => ({ status: 'processing' }),
    headers: (i) => ({ 'Idempotency-Key': `cost-${i}` }),
  },
  {
    id: 'page-publish',
    name: 'page publish: POST /content/pages/{xid}/publish',
    method: 'POST',
    route: '/v1/content/pages/{external_id}/publish',
    path: (i) => `/content/pages/cost-${i}/publish`,
    headers: (i) => ({ 'Idempotency-Key': `cost-pub-${i}` }),
    setup: { method: 'PUT', path: (i) => `/content/pages/cost-${i}`, body: (i) => page(i, `Post ${i}`) },
  },
  {
    id: 'page-list',
    name: 'list page: GET /content/pages?type=blog&limit=50',
    method: 'GET',
    route: '/v1/content/pages',
    path: () => '/content/pages?type=blog&limit=50',
  },
];
