import { isRefused } from '#domain/outcome.ts';
import * as v from 'valibot';
import { validate } from '#domain/validation.ts';
import { markOrderPaid, placeOrder } from '#app/orders.ts';
import { ORDER_REFERENCE_PATTERN, ORDER_REFERENCE_RULE } from '#domain/order/rules.ts';
import type { AdminCommand } from './commands.ts';
import { CurrencyArg, StoreIdArg } from './args.ts';

/**
 * The storefront's and the payment provider's side of orders (docs/contract.md#admin-cli): orders never enter
 * through the integration API, and `paid` is never set there.
 */
const Reference = v.pipe(v.string(), v.regex(ORDER_REFERENCE_PATTERN, `must be ${ORDER_REFERENCE_RULE}`));
const Money = v.pipe(
  v.number(),
  v.integer('must be an integer (minor units)'),
  v.minValue(0),
  v.maxValue(1_000_000_000_000),
);
const OptionalId = v.optional(v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1))), null);
const Text = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(max));

const OrderFile = v.strictObject({
  reference: Reference,
  status: v.optional(v.picklist(['pending', 'paid'], 'a new order is pending or paid'), 'pending'),
  currency_code: v.optional(CurrencyArg),
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
  paid_total: v.optional(Money),
});

export const orderCommands: Record<string, AdminCommand> = {
  'orders place': async (ctx, args) => {
    const a = validate(v.strictObject({ store: StoreIdArg, file: OrderFile }), args);
    if (isRefused(a)) return a;
    const { store, file } = a;
    return placeOrder(ctx, store, file);
  },
  'orders mark-paid': async (ctx, args) => {
    const a = validate(v.strictObject({ store: StoreIdArg, reference: Reference }), args);
    if (isRefused(a)) return a;
    const { store, reference } = a;
    return markOrderPaid(ctx, store, reference);
  },
};
