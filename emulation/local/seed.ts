import { newContext } from '#shared/context.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { getStore } from '#db/store/repo.ts';
import { ProductIds } from '#app/product-ids.ts';
import type { NewProduct } from '#domain/product/product-write.ts';
import { resolveTaxonomy } from '#db/taxonomy/repo.ts';
import { putCategory, putTag } from '#app/taxonomy.ts';
import { insertPage } from '#app/pages.ts';
import { ABILITIES } from '#domain/key/abilities.ts';
import type { OrderStatus } from '#domain/order/order.ts';
import { IDEMPOTENCY_HEADER } from '#domain/idempotency.ts';
import { API_BASE_PATH, API_ROUTES, canonicalPath } from '#http/api-routes.ts';
import { setOrderStatus } from '#functions/orders/routes/set-order-status.ts';
import {
  DEMO_CATEGORIES,
  DEMO_CURRENCY,
  DEMO_STORE,
  DEMO_TAGS,
  demoOrders,
  demoPages,
  demoProducts,
  type DemoSku,
} from '#http/openapi/example-data.ts';

export { DEMO_STORE };

async function run<T>(command: string, args: Record<string, unknown>): Promise<T> {
  const out = await admin({ command, args });
  if (!out.ok) throw new Error(`${command}: ${out.error.message}`);
  return out.data as T;
}

/**
 * The demo store of the local stack: products (several with variants, properties and dimensions),
 * categories, tags, orders in every status, and a few pages, the catalog and pages owned by the demo key.
 * Deterministic (shared/http/openapi/example-data.ts), so that the README's and the API reference's examples show what
 * a newcomer sees.
 *
 * Orders arrive as they do in a store, so the event log tells their story with honest origins:
 * placed by the storefront (`orders place`: `order.created`, origin storefront), paid by the payment
 * side (`orders mark-paid`: `order.paid`, origin storefront), then moved by the demo key through the
 * status endpoint's own route (`order.status_changed`, origin the demo key), as an integration's
 * `POST /orders/{reference}/status` would. The catalog's events name the demo key, which owns
 * its external ids.
 */
export async function seedDemoStore(): Promise<{ token: string; keyId: number } | undefined> {
  if (await getStore(newContext(), DEMO_STORE)) return undefined;
  await run('stores create', { id: DEMO_STORE, name: 'Demo Furniture', currency: DEMO_CURRENCY });
  const key = await run<{ id: number; token: string }>('keys create', {
    store: DEMO_STORE,
    name: 'demo (all abilities)',
    abilities: ABILITIES.join(','),
  });
  const now = () => new Date().toISOString();
  const skus = await seedDemoCatalog(DEMO_STORE, key.id);

  const moveBy = statusMover(key.id);
  for (const { reference, status, items, shipping_total, discount_total, customer } of demoOrders(skus)) {
    await run('orders place', {
      store: DEMO_STORE,
      file: {
        reference,
        customer,
        items: items.map(({ total: _total, ...line }) => line),
        shipping_total,
        discount_total,
      },
    });
    const [first, ...rest] = STATUS_PATH[status];
    if (first === 'paid') await run('orders mark-paid', { store: DEMO_STORE, reference });
    else if (first) await moveBy(reference, first);
    for (const next of rest) await moveBy(reference, next);
  }

  for (const p of demoPages()) {
    await insertPage(newContext(), {
      store_id: DEMO_STORE,
      owner_key_id: key.id,
      ...p,
      published_at: p.status === 'draft' ? null : now(),
      draft: null,
      created_at: now(),
      updated_at: now(),
    });
  }
  return { token: key.token, keyId: key.id };
}

/**
 * The demo catalog (categories, tags, products in the list's order), owned by `keyId`, in a store
 * of its own: the demo store's, or a test's that runs docs/mcp.md's session as the demo key would.
 */
export async function seedDemoCatalog(storeId: string, keyId: number): Promise<DemoSku[]> {
  const now = () => new Date().toISOString();
  for (const [xid, name] of DEMO_CATEGORIES) await putCategory(newContext(), { storeId, keyId }, xid, name);
  for (const [xid, value] of DEMO_TAGS) await putTag(newContext(), { storeId, keyId }, xid, value);
  const resolved = await resolveTaxonomy(
    newContext(),
    'category',
    keyId,
    DEMO_CATEGORIES.map(([x]) => x),
  );
  const categoryIds = new Map<string, number>(DEMO_CATEGORIES.map(([x], i) => [x, resolved.ids[i] as number]));

  // A group of products per transaction, numbered in the list's order: the same ids as one at a
  // time, in a few round trips instead of one insert each (the bench's seed does the same).
  const drafts: NewProduct[] = demoProducts().map((p) => ({
    store_id: storeId,
    external_id: p.external_id,
    owner_key_id: keyId,
    name: p.name,
    description: p.description,
    status: p.status,
    image_url: p.image_url,
    category_ids: [categoryIds.get(p.category_external_id) as number],
    category_external_ids: [p.category_external_id],
    tag_external_ids: p.tag_external_ids,
    offers: p.offers,
    created_at: now(),
    updated_at: now(),
  }));
  const skus: DemoSku[] = [];
  const ids = new ProductIds(newContext(), storeId, undefined);
  try {
    for (const group of transactionGroups(drafts)) {
      const inserted = await ids.insert(group);
      if (inserted.kind !== 'inserted') throw new Error(`demo products not inserted: ${inserted.kind}`);
      for (const product of inserted.products)
        for (const o of product.offers)
          skus.push({ sku: o.sku as string, name: product.name, price: o.price, productId: product.id, offerId: o.id });
    }
  } finally {
    await ids.finish();
  }
  return skus;
}

/** From a new pending order to each demo status: `paid` first is the payment side, the rest the status endpoint. */
const STATUS_PATH: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: [],
  paid: ['paid'],
  processing: ['paid', 'processing'],
  shipped: ['paid', 'processing', 'shipped'],
  delivered: ['paid', 'processing', 'shipped', 'delivered'],
  returned: ['paid', 'processing', 'shipped', 'returned'],
  cancelled: ['cancelled'],
};

const STATUS_ROUTE = API_ROUTES.find((r) => r.operation === 'setOrderStatus')!;

/**
 * `POST /orders/{reference}/status` as the demo key, through the endpoint's route function (the
 * request the gateway would hand it): the same validation, use case, event and stored
 * Idempotency-Key answer, without spending the key's per-minute allowance at every first start.
 */
function statusMover(keyId: number) {
  return async (reference: string, status: OrderStatus) => {
    const pathParameters = { reference };
    const path = STATUS_ROUTE.path.replace('{reference}', reference);
    const result = await setOrderStatus(newContext(), {
      principal: {
        keyId,
        storeId: DEMO_STORE,
        abilities: ['orders:write-status'],
        currency: DEMO_CURRENCY,
        rate: { limit: 0, remaining: 0, resetSeconds: 0, limited: false, contended: false },
      },
      pathParameters,
      query: {},
      body: { status },
      headers: { [IDEMPOTENCY_HEADER.toLowerCase()]: `seed-${reference}-${status}` },
      requestId: `seed-${reference}-${status}`,
      url: `http://127.0.0.1${API_BASE_PATH}${path}`,
      method: STATUS_ROUTE.method,
      path: canonicalPath(STATUS_ROUTE, pathParameters),
    });
    if ((result.status ?? 200) !== 200) throw new Error(`${reference} → ${status}: ${JSON.stringify(result.body)}`);
  };
}

/**
 * The drafts cut into groups that each fit one transaction's 100 actions: the sequence, then per
 * product the product, its external-id link, its pending name, its event, and a SKU link per offer.
 */
function transactionGroups(drafts: readonly NewProduct[]): NewProduct[][] {
  const groups: NewProduct[][] = [];
  let actions = 100;
  for (const draft of drafts) {
    const needs = 4 + draft.offers.length;
    if (actions + needs > 100) {
      groups.push([]);
      actions = 1;
    }
    groups.at(-1)!.push(draft);
    actions += needs;
  }
  return groups;
}
