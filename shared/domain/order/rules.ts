import { ORDER_TRANSITIONS, type Order, type OrderStatus } from './order.ts';
import { EXTERNAL_ID_PATTERN, EXTERNAL_ID_RULE, externalIdFromPath } from '../validation.ts';
import { refused } from '../outcome.ts';

/** The 404 of an order that is not there, or of a reference no order can have. */
export const orderNotFound = () => refused('not_found', 'The order does not exist.');

/**
 * A reference travels in a URL path and a sort key, so it uses the alphabet of external ids
 * (docs/contract.md#limits): nothing to escape, nothing that a gateway could decode differently.
 */
export const ORDER_REFERENCE_PATTERN = EXTERNAL_ID_PATTERN;
export const ORDER_REFERENCE_RULE = EXTERNAL_ID_RULE;

/** A reference from the URL path, decoded as external ids are (same alphabet, same reasons). */
export const referenceFromPath = externalIdFromPath;

export type StatusDecision =
  | { kind: 'noop' }
  | { kind: 'change'; from: OrderStatus; to: OrderStatus }
  | { kind: 'forbidden'; from: OrderStatus; to: OrderStatus };

/**
 * docs/contract.md#orders for POST /orders/{reference}/status. Asking for the current status is a no-op
 * before it is a transition question, so `cancelled → cancelled` is a 200, not a 409.
 * (`paid` as a target is refused earlier, by validation, whatever the current status.)
 */
export function decideStatusChange(current: OrderStatus, requested: OrderStatus): StatusDecision {
  if (current === requested) return { kind: 'noop' };
  if (requested !== 'paid' && ORDER_TRANSITIONS[current].includes(requested))
    return { kind: 'change', from: current, to: requested };
  return { kind: 'forbidden', from: current, to: requested };
}

/**
 * The payment side (`orders mark-paid`): only a pending order can become paid; a paid order
 * stays as it is, so that a payment provider's retried confirmation is harmless. Anything
 * further along (or cancelled) is refused: a payment for it needs a human, not a status flip.
 */
export function decideMarkPaid(current: OrderStatus): StatusDecision {
  if (current === 'paid') return { kind: 'noop' };
  if (current === 'pending') return { kind: 'change', from: current, to: 'paid' };
  return { kind: 'forbidden', from: current, to: 'paid' };
}

/** The order after a status move; everything else, `paid_total` included, stays. */
export function withStatus(order: Order, status: OrderStatus, now: string): Order {
  return { ...order, status, updated_at: now };
}

/** The payment side also records the amount paid: the whole total. */
export function withPayment(order: Order, now: string): Order {
  return { ...order, status: 'paid', paid_total: order.total, updated_at: now };
}
