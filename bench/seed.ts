/** Products and orders written straight through the repository layer: seeding is not what is measured. */
import { insertProduct } from '../shared/db/product.repo.ts';
import { insertOrder } from '../shared/db/order.repo.ts';
import { computeTotals } from '../shared/domain/order/order.ts';

const WORDS = ['Oak', 'Walnut', 'Linen', 'Brass', 'Nordic', 'Rattan', 'Velvet', 'Maple'];

/** Products 1..count named `<word> item <i>`; every fifth has three variants (SKU `B-<i>-<v>`). */
export async function seedProducts(storeId: string, count: number): Promise<void> {
  const now = new Date().toISOString();
  for (let i = 1; i <= count; i++) {
    await insertProduct({
      store_id: storeId,
      external_id: null,
      owner_key_id: null,
      name: `${WORDS[i % WORDS.length]} item ${i}`,
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
}

/** Paid orders `B-1`..`B-<count>`, one item each. */
export async function seedOrders(storeId: string, count: number): Promise<void> {
  const now = new Date().toISOString();
  for (let i = 1; i <= count; i++) {
    const t = computeTotals([{ product_id: 1, offer_id: 1, sku: 'B-1-0', name: 'x', quantity: 1, price: 1000 }], 0, 0);
    await insertOrder({
      store_id: storeId,
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
}
