import { describe, expect, it } from 'vitest';
import { ORDER_STATUSES, ORDER_TRANSITIONS, type Order, type OrderStatus } from '#domain/order/order.ts';
import { decideMarkPaid, decideStatusChange, referenceFromPath, withPayment, withStatus } from '#domain/order/rules.ts';
import { buildCreatedEvent, buildPaidEvent, buildStatusChangedEvent, orderEventId } from '#domain/order/events.ts';

/** docs/contract.md#orders, written out once more by hand so that a change to the table is a visible decision. */
const ALLOWED: Record<OrderStatus, OrderStatus[]> = {
  pending: ['processing', 'cancelled'],
  paid: ['processing', 'cancelled'],
  processing: ['shipped', 'cancelled'],
  shipped: ['delivered', 'returned'],
  delivered: ['returned'],
  cancelled: [],
  returned: [],
};

const order: Order = {
  id: 7,
  store_id: 'shop',
  reference: 'R-7',
  status: 'paid',
  currency_code: 'EUR',
  customer: { name: 'A', email: 'a@example.com', phone: null },
  items: [{ product_id: null, offer_id: null, sku: null, name: 'x', quantity: 1, price: 100, total: 100 }],
  subtotal: 100,
  shipping_total: 0,
  discount_total: 0,
  total: 100,
  paid_total: 100,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

describe('order state machine', () => {
  it('matches docs/contract.md#orders', () => {
    expect(ORDER_TRANSITIONS).toEqual(ALLOWED);
  });

  for (const from of ORDER_STATUSES) {
    for (const to of ORDER_STATUSES) {
      const expected = from === to ? 'noop' : to !== 'paid' && ALLOWED[from].includes(to) ? 'change' : 'forbidden';
      it(`${from} → ${to} is ${expected}`, () => {
        expect(decideStatusChange(from, to).kind).toBe(expected);
      });
    }
  }

  it('never lets the API move an order to paid', () => {
    for (const from of ORDER_STATUSES.filter((s) => s !== 'paid'))
      expect(decideStatusChange(from, 'paid').kind).toBe('forbidden');
  });

  it('lets the payment side pay a pending order only; paid stays paid', () => {
    expect(decideMarkPaid('pending')).toEqual({ kind: 'change', from: 'pending', to: 'paid' });
    expect(decideMarkPaid('paid')).toEqual({ kind: 'noop' });
    for (const s of ['processing', 'shipped', 'delivered', 'cancelled', 'returned'] as const)
      expect(decideMarkPaid(s).kind).toBe('forbidden');
  });

  it('changes only status and updated_at on a move, and sets paid_total = total on payment', () => {
    const moved = withStatus({ ...order, paid_total: 42 }, 'processing', '2026-01-02T00:00:00.000Z');
    expect(moved).toEqual({ ...order, paid_total: 42, status: 'processing', updated_at: '2026-01-02T00:00:00.000Z' });
    const paid = withPayment({ ...order, status: 'pending', paid_total: 0 }, '2026-01-02T00:00:00.000Z');
    expect(paid).toMatchObject({ status: 'paid', paid_total: 100, updated_at: '2026-01-02T00:00:00.000Z' });
  });
});

describe('references in paths', () => {
  it('accepts the external-id alphabet, encoded or not, and nothing else', () => {
    expect(referenceFromPath('DEMO-1001')).toBe('DEMO-1001');
    expect(referenceFromPath('a%3Ab')).toBe('a:b');
    expect(referenceFromPath('a.b_c:d-e')).toBe('a.b_c:d-e');
    for (const bad of [undefined, '', 'a b', 'a/b', 'a%2Fb', '%E0%A4%A', 'x'.repeat(129), 'ü'])
      expect(referenceFromPath(bad)).toBeUndefined();
  });
});

describe('order.status_changed event', () => {
  it('has the agreed shape, the order after the change, and a 7-day TTL', () => {
    const previous = { ...order, status: 'paid' as const };
    const next = withStatus(previous, 'processing', '2026-03-04T05:06:07.089Z');
    const event = buildStatusChangedEvent(next, previous, new Date('2026-03-04T05:06:07.089Z'));
    expect(event).toEqual({
      event_id: orderEventId(next),
      follows: orderEventId(previous),
      event_type: 'order.status_changed',
      origin: { kind: 'admin' },
      store_id: 'shop',
      created_at: '2026-03-04T05:06:07.089Z',
      ttl: Math.floor(Date.parse('2026-03-04T05:06:07.089Z') / 1000) + 30 * 24 * 3600,
      payload: {
        type: 'order.status_changed',
        timestamp: '2026-03-04T05:06:07.089Z',
        changed_fields: ['status'],
        data: { order: { ...next, store_id: undefined }, previous_status: 'paid', status: 'processing' },
      },
    });
    expect(event.payload.data.order).not.toHaveProperty('store_id');
  });

  it("names each event by the order's version: its own id per change, the one before it as `follows`", () => {
    const versions = Array.from({ length: 100 }, (_, i) =>
      withStatus(order, 'processing', new Date(Date.UTC(2026, 0, 1, 0, 0, 0, i)).toISOString()),
    );
    const ids = versions.map((v) => orderEventId(v));
    expect(new Set(ids).size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^evt_[0-9a-f]{32}$/);
    // Another order or another store at the same moment is another event.
    expect(orderEventId({ ...versions[0]!, id: versions[0]!.id + 1 })).not.toBe(ids[0]);
    expect(orderEventId({ ...versions[0]!, store_id: 'other' })).not.toBe(ids[0]);
    // The same change built twice (a retried round) is the same event, which its outbox item's condition admits once.
    expect(buildStatusChangedEvent(versions[1]!, versions[0]!).event_id).toBe(ids[1]);
    expect(buildStatusChangedEvent(versions[1]!, versions[0]!).follows).toBe(ids[0]);
  });
});

describe('order.created and order.paid events', () => {
  it('order.created carries the order as placed, stamped with its created_at', () => {
    const placed = {
      ...order,
      status: 'pending' as const,
      created_at: '2026-03-04T05:06:07.089Z',
      updated_at: '2026-03-04T05:06:07.089Z',
    };
    const event = buildCreatedEvent(placed);
    expect(event.follows).toBeNull();
    expect(event).toMatchObject({
      event_type: 'order.created',
      origin: { kind: 'storefront' },
      store_id: 'shop',
      created_at: placed.created_at,
      payload: { type: 'order.created', timestamp: placed.created_at },
    });
    const { store_id: _s, ...resource } = placed;
    expect(event.payload.data).toStrictEqual({ order: resource });
  });

  it('order.paid carries the paid order and the status it left, stamped with the payment time', () => {
    const pending = { ...order, status: 'pending' as const, paid_total: 0 };
    const paid = withPayment(pending, '2026-03-04T05:06:07.089Z');
    const event = buildPaidEvent(paid, pending);
    expect(event.follows).toBe(orderEventId(pending));
    expect(event).toMatchObject({
      event_type: 'order.paid',
      origin: { kind: 'storefront' },
      created_at: '2026-03-04T05:06:07.089Z',
      ttl: Math.floor(Date.parse('2026-03-04T05:06:07.089Z') / 1000) + 30 * 24 * 3600,
      payload: {
        type: 'order.paid',
        timestamp: '2026-03-04T05:06:07.089Z',
        data: { previous_status: 'pending', status: 'paid' },
      },
    });
    expect(event.payload.data.order).toMatchObject({ status: 'paid', paid_total: 100 });
  });
});
