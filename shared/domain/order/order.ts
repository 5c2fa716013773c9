/** Orders: placed by the storefront, paid by the payment side, moved on by integrations. */
export const ORDER_STATUSES = [
  'pending',
  'paid',
  'processing',
  'shipped',
  'delivered',
  'cancelled',
  'returned',
] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** docs/contract.md#orders: the moves POST /orders/{reference}/status may make. `paid` is never a target here. */
export const ORDER_TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  pending: ['processing', 'cancelled'],
  paid: ['processing', 'cancelled'],
  processing: ['shipped', 'cancelled'],
  shipped: ['delivered', 'returned'],
  delivered: ['returned'],
  cancelled: [],
  returned: [],
};

export interface OrderItem {
  product_id: number | null;
  offer_id: number | null;
  sku: string | null;
  name: string;
  quantity: number;
  price: number;
  total: number;
}

export interface Order {
  id: number;
  store_id: string;
  reference: string;
  status: OrderStatus;
  currency_code: string;
  customer: { name: string; email: string; phone: string | null };
  items: OrderItem[];
  subtotal: number;
  shipping_total: number;
  discount_total: number;
  total: number;
  paid_total: number;
  created_at: string;
  updated_at: string;
}

/** The record of docs/contract.md#orders (the store id is ours, not the client's). */
export function toOrderResource(o: Order) {
  const { store_id: _s, ...rest } = o;
  return rest;
}

export function computeTotals(items: Omit<OrderItem, 'total'>[], shipping: number, discount: number) {
  const lines = items.map((i) => ({ ...i, total: i.price * i.quantity }));
  const subtotal = lines.reduce((s, i) => s + i.total, 0);
  return { items: lines, subtotal, total: Math.max(0, subtotal + shipping - discount) };
}
