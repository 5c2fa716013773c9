import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminCommand, storeWithKey } from '#fixtures/api.ts';
import {
  eventsOfOrder,
  idemKey,
  outboxEvents,
  insertTestOrder,
  orderFile,
  placeOrder,
  ref,
  statusPath,
} from '#fixtures/orders.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { ORDER_STATUSES } from '#domain/order/order.ts';

const outboxEventsOf = (storeId: string) => outboxEvents(storeId, 'any');
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('admin: orders place and orders mark-paid', () => {
  let storeId: string;
  let api: Awaited<ReturnType<typeof storeWithKey>>['client'];
  beforeAll(async () => {
    const s = await storeWithKey(['orders:read', 'orders:write-status']);
    storeId = s.storeId;
    api = s.client;
  });

  it('places an order with computed line totals, subtotal and total, visible through GET /orders', async () => {
    const order = await placeOrder(storeId, { reference: ref('PLACE') });
    expect(order).toEqual({
      id: expect.any(Number),
      reference: expect.stringMatching(/^PLACE-/),
      status: 'pending',
      currency_code: 'EUR',
      customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+31000000001' },
      items: [
        { product_id: 1, offer_id: 1, sku: 'CH-1', name: 'Oak Chair', quantity: 2, price: 4900, total: 9800 },
        { product_id: null, offer_id: null, sku: null, name: 'Gift wrap', quantity: 1, price: 250, total: 250 },
      ],
      subtotal: 10050,
      shipping_total: 990,
      discount_total: 500,
      total: 10540,
      paid_total: 0,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: expect.stringMatching(ISO_MS),
    });
    const listed = await api.get(`/orders?cursor=${order.id - 1}&limit=1`);
    expect(listed.body.data[0]).toEqual(order);
    // The order and its order.created event were written together.
    const events = await eventsOfOrder(storeId, order.id, 'any');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'outbox',
      event_type: 'order.created',
      created_at: order.created_at,
      payload: { type: 'order.created', timestamp: order.created_at, data: { order } },
    });
    expect(Object.keys(events[0]!.payload.data)).toEqual(['order']);
  });

  it('defaults a paid order’s paid_total to its total, and the currency to the store’s', async () => {
    const { currency_code: _c, ...file } = orderFile({ status: 'paid', shipping_total: 0, discount_total: 0 });
    const order = await adminCommand<Record<string, any>>('orders place', { store: storeId, file });
    expect(order).toMatchObject({ status: 'paid', total: 10050, paid_total: 10050, currency_code: 'EUR' });
  });

  it('refuses a duplicate reference, a bad file and an unknown store with one clear error', async () => {
    const reference = ref();
    await placeOrder(storeId, { reference });
    const before = (await outboxEventsOf(storeId)).length;
    const dup = await admin({ command: 'orders place', args: { store: storeId, file: orderFile({ reference }) } });
    expect(dup).toMatchObject({ ok: false, error: { field: 'reference' } });
    expect(await outboxEventsOf(storeId)).toHaveLength(before); // no event for an order that was not placed
    const cases: [Record<string, unknown>, string][] = [
      [{ items: [] }, 'file.items'],
      [{ status: 'shipped' }, 'file.status'],
      [{ reference: 'has space' }, 'file.reference'],
      [{ items: [{ name: 'x', quantity: 0, price: 1 }] }, 'file.items[0].quantity'],
      [{ items: [{ name: 'x', quantity: 1, price: 1.5 }] }, 'file.items[0].price'],
      [{ customer: { name: 'A', email: 'not-an-email' } }, 'file.customer.email'],
      [{ surprise: true }, 'file.surprise'],
    ];
    for (const [overrides, field] of cases) {
      const out = await admin({ command: 'orders place', args: { store: storeId, file: orderFile(overrides) } });
      expect(out, field).toMatchObject({ ok: false, error: { code: 'validation_failed', field } });
    }
    const missing = await admin({ command: 'orders place', args: { store: 'no-such-store', file: orderFile() } });
    expect(missing).toMatchObject({ ok: false, error: { code: 'not_found', field: 'store' } });
  });

  it('marks a pending order paid: status paid, paid_total = total, a new updated_at, and one order.paid event', async () => {
    const placed = await placeOrder(storeId);
    const paid = await adminCommand<Record<string, any>>('orders mark-paid', {
      store: storeId,
      reference: placed.reference,
    });
    expect(paid).toEqual({
      ...placed,
      status: 'paid',
      paid_total: placed.total,
      updated_at: expect.stringMatching(ISO_MS),
    });
    expect(paid.updated_at > placed.updated_at).toBe(true);
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(0); // a payment is not also a status change
    const [event, ...more] = await eventsOfOrder(storeId, placed.id, 'order.paid');
    expect(more).toHaveLength(0);
    expect(event).toMatchObject({
      event_type: 'order.paid',
      created_at: paid.updated_at,
      payload: {
        type: 'order.paid',
        timestamp: paid.updated_at,
        data: { order: paid, previous_status: 'pending', status: 'paid' },
      },
    });
    const since = await api.get(`/orders?updated_since=${encodeURIComponent(paid.updated_at)}`);
    expect(since.body.data.map((o: { id: number }) => o.id)).toContain(placed.id);
    // And the integration can then move it on; paid_total stays.
    const moved = await api.post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(moved.body.data).toMatchObject({ status: 'processing', paid_total: placed.total });
  });

  it('leaves an already paid order as it is (a repeated payment confirmation)', async () => {
    const placed = await placeOrder(storeId, { status: 'paid' });
    const again = await adminCommand('orders mark-paid', { store: storeId, reference: placed.reference });
    expect(again).toEqual(placed);
    expect(await eventsOfOrder(storeId, placed.id, 'order.paid')).toHaveLength(0);
  });

  it.each(ORDER_STATUSES.filter((s) => s !== 'pending' && s !== 'paid'))(
    'refuses to mark a %s order paid',
    async (status) => {
      const order = await insertTestOrder(storeId, { status });
      const out = await admin({ command: 'orders mark-paid', args: { store: storeId, reference: order.reference } });
      expect(out).toMatchObject({ ok: false, error: { code: 'invalid_transition' } });
    },
  );

  it('answers not_found for an unknown reference or store', async () => {
    expect(await admin({ command: 'orders mark-paid', args: { store: storeId, reference: 'NOPE-1' } })).toMatchObject({
      ok: false,
      error: { code: 'not_found', field: 'reference' },
    });
    expect(
      await admin({ command: 'orders mark-paid', args: { store: 'no-such-store', reference: 'NOPE-1' } }),
    ).toMatchObject({
      ok: false,
      error: { code: 'not_found', field: 'store' },
    });
  });

  it("places docs/orders.md's example order file as it stands, with the totals the doc states", async () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/orders.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Admin: `orders place`'));
    const block = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    expect(block, 'no json block in the orders place section of docs/orders.md').toBeDefined();
    // What the CLI does with --file: JSON.parse of the file's text.
    const file = JSON.parse(block!) as Record<string, unknown>;
    const { storeId: fresh, client: reader } = await storeWithKey(['orders:read']);
    const placed = await adminCommand<Record<string, any>>('orders place', { store: fresh, file });
    expect(placed).toMatchObject({ reference: file.reference, status: 'pending', subtotal: 13050, total: 13540 });
    expect(section).toContain(`\`subtotal\`\n  13050, \`total\` 13540`);
    const listed = await reader.get('/orders');
    expect(listed.body.data).toEqual([placed]);
  });
});
