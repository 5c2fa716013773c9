import { newContext } from '#shared/context.ts';
import { describe, expect, it } from 'vitest';
import { client } from '#fixtures/api.ts';
import { waitFor } from '#fixtures/webhooks.ts';
import { lastSequence } from '#db/event/log.repo.ts';
import { DEMO_STORE, seedDemoStore } from '#emulation/local/seed.ts';
import { demoOrders, demoProducts } from '#http/openapi/example-data.ts';

type Listed = { sequence: number; type: string; origin: { kind: string; key_id?: number } | null; data: any };

/**
 * The demo store `npm start` seeds on a fresh data directory (emulation/local/seed.ts) tells its
 * orders' story in the event log as a store would: placed and paid by the storefront, moved on by
 * the demo key; its catalog is the demo key's.
 */
describe('the demo store of a fresh stack', () => {
  it('logs order.created for every demo order, payments from the storefront and moves and catalog from the demo key', async () => {
    const seeded = await seedDemoStore();
    expect(seeded, 'the demo store already existed in the test store').toBeDefined();
    const { token, keyId } = seeded!;
    const api = client(token);
    const orders = demoOrders([{ sku: 'x', name: 'x', price: 1, productId: 1, offerId: 1 }]);
    // Every status past pending but cancelled was paid first; each step past paid is one status change.
    const steps: Record<string, number> = { pending: 0, paid: 0, processing: 1, shipped: 2, delivered: 3 };
    steps.returned = 3;
    steps.cancelled = 1;
    const paid = orders.filter((o) => !['pending', 'cancelled'].includes(o.status)).length;
    const moves = orders.reduce((n, o) => n + steps[o.status]!, 0);
    const catalog = 5 + 5 + demoProducts().length;
    const total = catalog + orders.length + paid + moves;
    await waitFor('the demo events numbered', async () => (await lastSequence(newContext(), DEMO_STORE)) >= total);

    const events: Listed[] = [];
    for (let cursor: number | null = 0; cursor !== null; ) {
      const res: { status: number; body: any } = await api.get(`/events?limit=100&cursor=${cursor}`);
      expect(res.status).toBe(200);
      events.push(...res.body.data);
      cursor = res.body.next_cursor;
    }
    const tally: Record<string, number> = {};
    for (const e of events) {
      const by = e.origin?.kind === 'key' ? (e.origin.key_id === keyId ? 'demo key' : 'another key') : e.origin?.kind;
      tally[`${e.type} by ${by}`] = (tally[`${e.type} by ${by}`] ?? 0) + 1;
    }
    expect(tally).toEqual({
      'category.upserted by demo key': 5,
      'tag.upserted by demo key': 5,
      'product.created by demo key': demoProducts().length,
      'order.created by storefront': orders.length,
      'order.paid by storefront': paid,
      'order.status_changed by demo key': moves,
    });
    expect(events).toHaveLength(total);
    const created = events.filter((e) => e.type === 'order.created').map((e) => e.data.order.reference);
    expect(created).toEqual(orders.map((o) => o.reference));

    // The orders end in the statuses of the API reference's example store.
    const listed = await api.get('/orders?limit=50');
    expect(listed.body.data.map((o: { reference: string; status: string }) => [o.reference, o.status])).toEqual(
      orders.map((o) => [o.reference, o.status]),
    );
  });
});
