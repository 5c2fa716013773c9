/** Products and orders written straight through the repository layer: seeding is not what is measured. */
import { newContext } from '#shared/context.ts';
import type { NewProduct } from '#domain/product/product-write.ts';
import { ProductIds } from '#app/product-ids.ts';
import { insertOrder, nextOrderId } from '#db/order/repo.ts';
import { computeTotals } from '#domain/order/order.ts';

const WORDS = ['Oak', 'Walnut', 'Linen', 'Brass', 'Nordic', 'Rattan', 'Velvet', 'Maple'];
/** Products per insert transaction: 16 × (product + pending name + up to 3 SKU links) + the sequence ≤ 100 actions. */
const GROUP = 16;

/**
 * Products `from`..`from + count - 1` (the store's next ids) named `<word> item <i>`, or `name(i)`
 * where given; every fifth has three variants (SKU `B-<i>-<v>`). Inserted 16 to a transaction, as
 * the batch endpoint inserts them.
 */
export async function seedProducts(
  storeId: string,
  count: number,
  options: { from?: number; name?: (i: number) => string | undefined } = {},
): Promise<void> {
  const now = new Date().toISOString();
  const from = options.from ?? 1;
  const draft = (i: number): NewProduct => ({
    store_id: storeId,
    external_id: null,
    owner_key_id: null,
    name: options.name?.(i) ?? `${WORDS[i % WORDS.length]} item ${i}`,
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
  const ids = new ProductIds(newContext(), storeId, undefined);
  try {
    for (let start = from; start < from + count; start += GROUP) {
      const batch = Array.from({ length: Math.min(GROUP, from + count - start) }, (_, k) => start + k);
      const inserted = await ids.insert(batch.map(draft));
      if (inserted.kind !== 'inserted') throw new Error(`bench products not inserted: ${inserted.kind}`);
    }
  } finally {
    await ids.finish();
  }
}

/** Paid orders `B-1`..`B-<count>`, one item each. */
export async function seedOrders(storeId: string, count: number): Promise<void> {
  const now = new Date().toISOString();
  for (let i = 1; i <= count; i++) {
    const t = computeTotals([{ product_id: 1, offer_id: 1, sku: 'B-1-0', name: 'x', quantity: 1, price: 1000 }], 0, 0);
    const inserted = await insertOrder(newContext(), {
      id: await nextOrderId(newContext(), storeId),
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
    if (inserted.kind !== 'inserted') throw new Error(`order B-${i} of store ${storeId} exists already`);
  }
}
