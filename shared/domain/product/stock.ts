/**
 * A stock delta (POST /catalog/products/{external_id}/stock, the MCP tool adjust_stock): one
 * variant's quantity moved by a signed amount, decided from the stored product. Pure: the use case
 * reads, this decides, the repository commits guarded on what was read.
 */
import * as v from 'valibot';
import { nextUpdatedAt } from '../time.ts';
import type { Offer, Product } from './product.ts';
import { described } from '../validation.ts';

const MAX = Number.MAX_SAFE_INTEGER;

export const StockDeltaBody = v.strictObject({
  delta: described(
    v.pipe(
      v.number('must be an integer'),
      v.integer('must be an integer'),
      v.minValue(-MAX, `must be at least -${MAX}`),
      v.maxValue(MAX, `must be at most ${MAX}`),
      v.check((d) => d !== 0, 'must not be 0'),
    ),
    'The signed amount to add to the variant’s quantity (-3 takes three out of stock); not 0.',
  ),
  sku: v.optional(
    described(
      v.pipe(
        v.string('must be a string'),
        v.minLength(1, 'must not be empty'),
        v.maxLength(64, 'must be at most 64 characters'),
      ),
      'The SKU of the variant to adjust; default: the first variant.',
    ),
  ),
  expected_quantity: v.optional(
    described(
      v.pipe(
        v.number('must be an integer'),
        v.integer('must be an integer'),
        v.minValue(0, 'must be at least 0'),
        v.maxValue(MAX, `must be at most ${MAX}`),
      ),
      'Adjust only if the variant holds exactly this quantity now (compare-and-swap); else 409 quantity_changed.',
    ),
  ),
});

export type StockDelta = v.InferOutput<typeof StockDeltaBody>;

/** What a delta does to a product: a change, or why it is refused (nothing is written then). */
export type StockDecision =
  /** `offer` is the changed variant, at `index` of `next.offers`. */
  | { kind: 'changed'; next: Product; offer: Offer; index: number }
  /** No variant with this SKU (or, without a SKU, no variant at all). */
  | { kind: 'no_variant'; sku: string | undefined }
  /** `expected_quantity` is not what the variant holds. */
  | { kind: 'quantity_changed'; quantity: number }
  /** The result would be below 0. */
  | { kind: 'insufficient_stock'; quantity: number }
  /** The result would pass the largest quantity a variant holds (Number.MAX_SAFE_INTEGER). */
  | { kind: 'above_maximum'; quantity: number };

export function decideStockDelta(current: Product, delta: StockDelta, nowMs: number): StockDecision {
  const index =
    delta.sku === undefined
      ? current.offers.length > 0
        ? 0
        : -1
      : current.offers.findIndex((o) => o.sku === delta.sku);
  const offer = current.offers[index];
  if (!offer) return { kind: 'no_variant', sku: delta.sku };
  if (delta.expected_quantity !== undefined && delta.expected_quantity !== offer.quantity)
    return { kind: 'quantity_changed', quantity: offer.quantity };
  const quantity = offer.quantity + delta.delta;
  if (quantity < 0) return { kind: 'insufficient_stock', quantity: offer.quantity };
  if (quantity > MAX) return { kind: 'above_maximum', quantity: offer.quantity };
  const changed: Offer = { ...offer, quantity };
  const offers = current.offers.map((o, i) => (i === index ? changed : o));
  return {
    kind: 'changed',
    next: { ...current, offers, updated_at: nextUpdatedAt(current.updated_at, nowMs) },
    offer: changed,
    index,
  };
}
