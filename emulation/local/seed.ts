import { handler as admin } from '#functions/admin/handler.ts';
import { getStore } from '#db/store/repo.ts';
import { insertProduct } from '#db/product/repo.ts';
import { resolveTaxonomy, upsertCategory, upsertTag } from '#db/taxonomy/repo.ts';
import { insertOrder } from '#db/order/repo.ts';
import { insertPage } from '#db/page/repo.ts';
import { ABILITIES } from '#domain/key/abilities.ts';
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

/**
 * The demo store of the local stack: products (several with variants, properties and dimensions),
 * categories, tags, orders in every status, and a few pages, all owned by the demo key.
 * Deterministic (shared/http/openapi/example-data.ts), so that the README's and the API reference's examples show what
 * a newcomer sees.
 */
export { DEMO_STORE };

async function run<T>(command: string, args: Record<string, unknown>): Promise<T> {
  const out = await admin({ command, args });
  if (!out.ok) throw new Error(`${command}: ${out.error.message}`);
  return out.data as T;
}

export async function seedDemoStore(): Promise<{ token: string; keyId: number } | undefined> {
  if (await getStore(DEMO_STORE)) return undefined;
  await run('stores create', { id: DEMO_STORE, name: 'Demo Furniture', currency: DEMO_CURRENCY });
  const key = await run<{ id: number; token: string }>('keys create', {
    store: DEMO_STORE,
    name: 'demo (all abilities)',
    abilities: ABILITIES.join(','),
  });
  const now = () => new Date().toISOString();
  for (const [xid, name] of DEMO_CATEGORIES) await upsertCategory(DEMO_STORE, key.id, xid, name, now());
  for (const [xid, value] of DEMO_TAGS) await upsertTag(DEMO_STORE, key.id, xid, value, now());
  const resolved = await resolveTaxonomy(
    'category',
    key.id,
    DEMO_CATEGORIES.map(([x]) => x),
  );
  const categoryIds = new Map<string, number>(DEMO_CATEGORIES.map(([x], i) => [x, resolved.ids[i] as number]));

  const skus: DemoSku[] = [];
  for (const p of demoProducts()) {
    const product = await insertProduct({
      store_id: DEMO_STORE,
      external_id: p.external_id,
      owner_key_id: key.id,
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
    });
    for (const o of product.offers)
      skus.push({ sku: o.sku as string, name: p.name, price: o.price, productId: product.id, offerId: o.id });
  }

  for (const { reference, status, ...rest } of demoOrders(skus)) {
    // Field order as the contract lists it: reference, status, currency_code, customer, ...
    await insertOrder({
      store_id: DEMO_STORE,
      reference,
      status,
      currency_code: DEMO_CURRENCY,
      ...rest,
      created_at: now(),
      updated_at: now(),
    });
  }

  for (const p of demoPages()) {
    await insertPage({
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
