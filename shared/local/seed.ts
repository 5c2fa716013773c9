import { handler as admin } from '../../functions/admin/handler.ts';
import { getStore } from '../db/store.repo.ts';
import { insertProduct } from '../db/product.repo.ts';
import { upsertCategory, upsertTag } from '../db/taxonomy.repo.ts';
import { insertOrder } from '../db/order.repo.ts';
import { insertPage } from '../db/page.repo.ts';
import { ABILITIES } from '../domain/key/abilities.ts';
import { computeTotals, type OrderStatus } from '../domain/order/order.ts';
import type { Offer, ProductStatus } from '../domain/product/product.ts';

/**
 * The demo store of the local stack: products (several with variants, properties and dimensions),
 * categories, tags, orders in every status, and a few pages, all owned by the demo key.
 * Deterministic, so that the README's examples show what a newcomer sees.
 */
export const DEMO_STORE = 'demo';

async function run<T>(command: string, args: Record<string, unknown>): Promise<T> {
  const out = await admin({ command, args });
  if (!out.ok) throw new Error(`${command}: ${out.error.message}`);
  return out.data as T;
}

const CATEGORIES = [
  ['chairs', 'Chairs'],
  ['tables', 'Tables'],
  ['lighting', 'Lighting'],
  ['textiles', 'Textiles'],
  ['storage', 'Storage'],
] as const;
const TAGS = [
  ['oak', 'oak'],
  ['handmade', 'handmade'],
  ['outdoor', 'outdoor'],
  ['bestseller', 'bestseller'],
  ['eco', 'eco'],
] as const;
const NOUNS = ['Chair', 'Table', 'Lamp', 'Rug', 'Shelf', 'Stool', 'Bench', 'Cushion'];
const ADJECTIVES = ['Oak', 'Walnut', 'Linen', 'Brass', 'Nordic', 'Rattan', 'Velvet', 'Concrete', 'Maple', 'Bamboo'];
const COLORS = ['Natural', 'Black', 'Sand', 'Olive'];
const SIZES = ['S', 'M', 'L'];

export async function seedDemoStore(): Promise<{ token: string; keyId: number } | undefined> {
  if (await getStore(DEMO_STORE)) return undefined;
  await run('stores create', { id: DEMO_STORE, name: 'Demo Furniture', currency: 'EUR' });
  const key = await run<{ id: number; token: string }>('keys create', {
    store: DEMO_STORE,
    name: 'demo (all abilities)',
    abilities: ABILITIES.join(','),
  });
  const now = () => new Date().toISOString();
  for (const [xid, name] of CATEGORIES) await upsertCategory(DEMO_STORE, key.id, xid, name, now());
  for (const [xid, value] of TAGS) await upsertTag(DEMO_STORE, key.id, xid, value, now());
  const categoryIds = new Map<string, number>();
  {
    const { resolveTaxonomy } = await import('../db/taxonomy.repo.ts');
    const resolved = await resolveTaxonomy('category', key.id, CATEGORIES.map(([x]) => x));
    CATEGORIES.forEach(([x], i) => categoryIds.set(x, resolved.ids[i] as number));
  }

  const skus: { sku: string; name: string; price: number; productId: number; offerId: number }[] = [];
  for (let i = 0; i < 44; i++) {
    const noun = NOUNS[i % NOUNS.length] as string;
    const adjective = ADJECTIVES[i % ADJECTIVES.length] as string;
    const name = `${adjective} ${noun}${i >= 40 ? ' Deluxe' : ''}`;
    const base = 4900 + ((i * 3700) % 90000);
    const variants = i % 6 === 0 ? COLORS.length : i % 7 === 0 ? SIZES.length : 1;
    const offers: Omit<Offer, 'id'>[] = Array.from({ length: variants }, (_, v) => ({
      sku: `${noun.slice(0, 3).toUpperCase()}-${String(i + 1).padStart(3, '0')}${variants > 1 ? `-${v + 1}` : ''}`,
      price: base + v * 1500,
      quantity: (i * 7 + v * 3) % 25,
      properties:
        variants === 1 ? [] : i % 6 === 0 ? [{ name: 'color', value: COLORS[v] as string }] : [{ name: 'size', value: SIZES[v] as string }],
      weight: 2 + (i % 9) * 1.5,
      length: 40 + (i % 5) * 10,
      height: 45 + (i % 4) * 15,
      width: 40 + (i % 3) * 20,
    }));
    const category = CATEGORIES[i % CATEGORIES.length]?.[0] as string;
    const status: ProductStatus = i % 13 === 12 ? 'archived' : i % 17 === 16 ? 'draft' : 'active';
    const product = await insertProduct({
      store_id: DEMO_STORE,
      external_id: `demo-product-${i + 1}`,
      owner_key_id: key.id,
      name,
      description: `${name}: a demo product of the local stack.`,
      status,
      image_url: `https://images.example.com/demo/${i + 1}.jpg`,
      category_ids: [categoryIds.get(category) as number],
      category_external_ids: [category],
      tag_external_ids: [TAGS[i % TAGS.length]?.[0] as string],
      offers,
      created_at: now(),
      updated_at: now(),
    });
    for (const o of product.offers) skus.push({ sku: o.sku as string, name, price: o.price, productId: product.id, offerId: o.id });
  }

  const statuses: OrderStatus[] = ['pending', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'returned'];
  for (let i = 0; i < 35; i++) {
    const status = statuses[i % statuses.length] as OrderStatus;
    const lines = [0, 1].slice(0, 1 + (i % 2)).map((n) => {
      const s = skus[(i * 5 + n * 11) % skus.length]!;
      return { product_id: s.productId, offer_id: s.offerId, sku: s.sku, name: s.name, quantity: 1 + ((i + n) % 3), price: s.price };
    });
    const shipping = 990;
    const discount = i % 4 === 0 ? 500 : 0;
    const totals = computeTotals(lines, shipping, discount);
    const paid = status === 'pending' || status === 'cancelled' ? 0 : totals.total;
    await insertOrder({
      store_id: DEMO_STORE,
      reference: `DEMO-${String(1001 + i)}`,
      status,
      currency_code: 'EUR',
      customer: { name: `Customer ${i + 1}`, email: `customer${i + 1}@example.com`, phone: i % 3 === 0 ? null : `+3100000${String(i).padStart(4, '0')}` },
      items: totals.items,
      subtotal: totals.subtotal,
      shipping_total: shipping,
      discount_total: discount,
      total: totals.total,
      paid_total: paid,
      created_at: now(),
      updated_at: now(),
    });
  }

  const pages = [
    { xid: 'about', type: 'page', title: 'About us', slug: 'about-us', status: 'published' },
    { xid: 'shipping', type: 'page', title: 'Shipping and returns', slug: 'shipping-and-returns', status: 'published' },
    { xid: 'care-guide', type: 'blog', title: 'Caring for oak furniture', slug: 'caring-for-oak-furniture', status: 'draft' },
    { xid: 'spring-2026', type: 'blog', title: 'Spring collection 2026', slug: 'spring-collection-2026', status: 'unpublished' },
  ] as const;
  for (const p of pages) {
    await insertPage({
      store_id: DEMO_STORE,
      external_id: p.xid,
      owner_key_id: key.id,
      type: p.type,
      title: p.title,
      slug: p.slug,
      body: `<h2>${p.title}</h2><p>Demo content of the local stack.</p>`,
      status: p.status,
      published_at: p.status === 'draft' ? null : now(),
      draft: null,
      created_at: now(),
      updated_at: now(),
    });
  }
  return { token: key.token, keyId: key.id };
}
