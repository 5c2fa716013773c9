/**
 * The example store of the API reference, as pure data: the OpenAPI document takes its examples
 * from it, and the local stack's seed (emulation/local/seed.ts) writes the same records, so what
 * `npm start` serves is what the reference shows.
 */
import { computeTotals, type Order, type OrderStatus } from '#domain/order/order.ts';
import type { Offer, ProductStatus } from '#domain/product/product.ts';
import type { PageStatus, PageType } from '#domain/page/page.ts';

export const DEMO_STORE = 'demo';
export const DEMO_CURRENCY = 'EUR';

export const DEMO_CATEGORIES = [
  ['chairs', 'Chairs'],
  ['tables', 'Tables'],
  ['lighting', 'Lighting'],
  ['textiles', 'Textiles'],
  ['storage', 'Storage'],
] as const;
export const DEMO_TAGS = [
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

export interface DemoProduct {
  external_id: string;
  name: string;
  description: string;
  status: ProductStatus;
  image_url: string;
  category_external_id: string;
  tag_external_ids: string[];
  offers: Omit<Offer, 'id'>[];
}

export function demoProducts(): DemoProduct[] {
  return Array.from({ length: 44 }, (_, i) => {
    const noun = NOUNS[i % NOUNS.length] as string;
    const adjective = ADJECTIVES[i % ADJECTIVES.length] as string;
    const name = `${adjective} ${noun}${i >= 40 ? ' Deluxe' : ''}`;
    const base = 4900 + ((i * 3700) % 90000);
    const variants = i % 6 === 0 ? COLORS.length : i % 7 === 0 ? SIZES.length : 1;
    const offers = Array.from({ length: variants }, (_, v) => ({
      sku: `${noun.slice(0, 3).toUpperCase()}-${String(i + 1).padStart(3, '0')}${variants > 1 ? `-${v + 1}` : ''}`,
      price: base + v * 1500,
      quantity: (i * 7 + v * 3) % 25,
      properties:
        variants === 1
          ? []
          : i % 6 === 0
            ? [{ name: 'color', value: COLORS[v] as string }]
            : [{ name: 'size', value: SIZES[v] as string }],
      weight: 2 + (i % 9) * 1.5,
      length: 40 + (i % 5) * 10,
      height: 45 + (i % 4) * 15,
      width: 40 + (i % 3) * 20,
    }));
    return {
      external_id: `demo-product-${i + 1}`,
      name,
      description: `${name}: a demo product of the local stack.`,
      status: i % 13 === 12 ? 'archived' : i % 17 === 16 ? 'draft' : 'active',
      image_url: `https://images.example.com/demo/${i + 1}.jpg`,
      category_external_id: DEMO_CATEGORIES[i % DEMO_CATEGORIES.length]?.[0] as string,
      tag_external_ids: [DEMO_TAGS[i % DEMO_TAGS.length]?.[0] as string],
      offers,
    };
  });
}

export interface DemoSku {
  sku: string;
  name: string;
  price: number;
  productId: number;
  offerId: number;
}

/** An order as the demo store places it: the stored order less what the store assigns. */
export type DemoOrder = Pick<
  Order,
  | 'reference'
  | 'status'
  | 'customer'
  | 'items'
  | 'subtotal'
  | 'shipping_total'
  | 'discount_total'
  | 'total'
  | 'paid_total'
>;

/** 35 orders in every status, their lines drawn from the stored variants (`skus`). */
export function demoOrders(skus: readonly DemoSku[]): DemoOrder[] {
  const statuses: OrderStatus[] = ['pending', 'paid', 'processing', 'shipped', 'delivered', 'cancelled', 'returned'];
  return Array.from({ length: 35 }, (_, i) => {
    const status = statuses[i % statuses.length] as OrderStatus;
    const lines = [0, 1].slice(0, 1 + (i % 2)).map((n) => {
      const s = skus[(i * 5 + n * 11) % skus.length]!;
      return {
        product_id: s.productId,
        offer_id: s.offerId,
        sku: s.sku,
        name: s.name,
        quantity: 1 + ((i + n) % 3),
        price: s.price,
      };
    });
    const shipping = 990;
    const discount = i % 4 === 0 ? 500 : 0;
    const totals = computeTotals(lines, shipping, discount);
    return {
      reference: `DEMO-${String(1001 + i)}`,
      status,
      customer: {
        name: `Customer ${i + 1}`,
        email: `customer${i + 1}@example.com`,
        phone: i % 3 === 0 ? null : `+3100000${String(i).padStart(4, '0')}`,
      },
      items: totals.items,
      subtotal: totals.subtotal,
      shipping_total: shipping,
      discount_total: discount,
      total: totals.total,
      paid_total: status === 'pending' || status === 'cancelled' ? 0 : totals.total,
    };
  });
}

export interface DemoPage {
  external_id: string;
  type: PageType;
  title: string;
  slug: string;
  body: string;
  status: PageStatus;
}

export function demoPages(): DemoPage[] {
  const pages = [
    { external_id: 'about', type: 'page', title: 'About us', slug: 'about-us', status: 'published' },
    {
      external_id: 'shipping',
      type: 'page',
      title: 'Shipping and returns',
      slug: 'shipping-and-returns',
      status: 'published',
    },
    {
      external_id: 'care-guide',
      type: 'blog',
      title: 'Caring for oak furniture',
      slug: 'caring-for-oak-furniture',
      status: 'draft',
    },
    {
      external_id: 'spring-2026',
      type: 'blog',
      title: 'Spring collection 2026',
      slug: 'spring-collection-2026',
      status: 'unpublished',
    },
  ] as const;
  return pages.map((p) => ({ ...p, body: `<h2>${p.title}</h2><p>Demo content of the local stack.</p>` }));
}
