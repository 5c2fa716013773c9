import * as v from 'valibot';
import { parse } from '../../shared/domain/validation.ts';
import { DomainError } from '../../shared/domain/errors.ts';
import { getStore } from '../../shared/db/store.repo.ts';
import { commitPayment, getOrderByReference, insertOrder } from '../../shared/db/order.repo.ts';
import { computeTotals, toOrderResource } from '../../shared/domain/order/order.ts';
import { decideMarkPaid, ORDER_REFERENCE_PATTERN, ORDER_REFERENCE_RULE, withPayment } from '../../shared/domain/order/rules.ts';

/**
 * The storefront's and the payment provider's side of orders (CONTRACT §2): orders never enter
 * through the integration API, and `paid` is never set there.
 */
type AdminCommand = (args: Record<string, unknown>) => Promise<unknown>;

const StoreId = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'must be 1-63 lower-case letters, digits or hyphens'));
const Reference = v.pipe(v.string(), v.regex(ORDER_REFERENCE_PATTERN, `must be ${ORDER_REFERENCE_RULE}`));
const Money = v.pipe(v.number(), v.integer('must be an integer (minor units)'), v.minValue(0), v.maxValue(1_000_000_000_000));
const OptionalId = v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))), null);
const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(max));

const OrderFile = v.strictObject({
  reference: Reference,
  status: v.optional(v.picklist(['pending', 'paid'], 'a new order is pending or paid'), 'pending'),
  currency_code: v.optional(v.pipe(v.string(), v.regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code like EUR'))),
  customer: v.strictObject({
    name: Text(255),
    email: v.pipe(v.string(), v.trim(), v.email('must be an e-mail address'), v.maxLength(254)),
    phone: v.optional(v.nullable(v.pipe(v.string(), v.trim(), v.maxLength(64))), null),
  }),
  items: v.pipe(
    v.array(
      v.strictObject({
        sku: v.optional(v.nullable(v.pipe(v.string(), v.maxLength(64))), null),
        name: Text(255),
        quantity: v.pipe(v.number(), v.integer('must be an integer'), v.minValue(1), v.maxValue(1_000_000)),
        price: Money,
        product_id: OptionalId,
        offer_id: OptionalId,
      }),
    ),
    v.minLength(1, 'an order has at least one line'),
    v.maxLength(500),
  ),
  shipping_total: v.optional(Money, 0),
  discount_total: v.optional(Money, 0),
  /** Default: the whole total for a paid order, nothing for a pending one. */
  paid_total: v.optional(Money),
});

async function requireStore(storeId: string) {
  const store = await getStore(storeId);
  if (!store) throw new DomainError('not_found', `store "${storeId}" does not exist`, 'store');
  return store;
}

export const orderCommands: Record<string, AdminCommand> = {
  'orders place': async (args) => {
    const a = parse(v.strictObject({ store: StoreId, file: OrderFile }), args);
    const store = await requireStore(a.store);
    const o = a.file;
    const totals = computeTotals(o.items, o.shipping_total, o.discount_total);
    const now = new Date().toISOString();
    const order = await insertOrder({
      store_id: store.id,
      reference: o.reference,
      status: o.status,
      currency_code: o.currency_code ?? store.currency_code,
      customer: { name: o.customer.name, email: o.customer.email, phone: o.customer.phone },
      items: totals.items,
      subtotal: totals.subtotal,
      shipping_total: o.shipping_total,
      discount_total: o.discount_total,
      total: totals.total,
      paid_total: o.paid_total ?? (o.status === 'paid' ? totals.total : 0),
      created_at: now,
      updated_at: now,
    });
    return toOrderResource(order);
  },

  'orders mark-paid': async (args) => {
    const a = parse(v.strictObject({ store: StoreId, reference: Reference }), args);
    await requireStore(a.store);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const order = await getOrderByReference(a.store, a.reference);
      if (!order) throw new DomainError('not_found', `order "${a.reference}" does not exist in store "${a.store}"`, 'reference');
      const decision = decideMarkPaid(order.status);
      // A payment confirmation arrives more than once; the second one finds the order paid.
      if (decision.kind === 'noop') return toOrderResource(order);
      if (decision.kind === 'forbidden') {
        throw new DomainError('invalid_transition', `order "${a.reference}" is ${order.status}; only a pending order can be marked paid`, 'reference');
      }
      const now = new Date(Math.max(Date.now(), Date.parse(order.updated_at) + 1)).toISOString();
      const paid = await commitPayment(order, withPayment(order, now));
      if (paid) return toOrderResource(paid);
      // The status moved between our read and our write: decide again from what it is now.
    }
    throw new Error(`order "${a.reference}": payment kept racing with status changes`);
  },
};
