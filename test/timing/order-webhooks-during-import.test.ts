import { afterAll, describe, expect, it } from 'vitest';
import { adminCommand, client, createKey, createStore } from '#fixtures/api.ts';
import { BAD_AND_HEALTHY, receiver } from '#fixtures/bad-receivers.ts';
import { idemKey, placeOrder, statusPath } from '#fixtures/orders.ts';
import { sleep, waitFor } from '#fixtures/webhooks.ts';
import { ORDER_CREATED, ORDER_STATUS_CHANGED } from '#domain/order/events.ts';

const WRITERS = 10;
const BATCH = 100;
const CHANGES = 20;
/** Issue 47's bounds: every delivery within 3 s of its change, the 95th percentile within 2 s. */
const EVERY_MS = 3000;
const P95_MS = 2000;

/** Nearest-rank percentile. */
const percentile = (xs: readonly number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * xs.length) - 1)] ?? Number.NaN;

/** How many of the store's events are numbered (in its event log). */
async function numberedEvents(store: string): Promise<number> {
  let count = 0;
  for (let after = 0; ; ) {
    const page = await adminCommand<{ data: unknown[]; next_after: number | null }>('webhooks events', {
      store,
      after,
      limit: 100,
    });
    count += page.data.length;
    if (page.data.length === 0 || page.next_after === null) return count;
    after = page.next_after;
  }
}

/**
 * A store's order webhooks do not wait behind its own catalog import (issue 47; docs/webhooks.md,
 * "Order events first"). Ten keys import 1,000 products in ten parallel batches of 100 beside
 * receivers that hang, drip and answer 500 (the load stack retries after 1, 1 and 2 s); right after
 * the batches answer, while the stream still holds their thousand catalog events, 20 orders change
 * status one after another. Each change's delivery to the healthy receiver is timed from the
 * event's own timestamp (the commit) to its arrival: express queue, numbering, fan-out, queue, signer.
 *
 * This is the one test with a wall-clock bound, because the bound is the promise. Through the
 * stream alone, an order event waited for the catalog events numbered ahead of it (p50 9.3 s here
 * on an idle machine, 2026-11-29); the express lane numbers it at once. It stops by itself: the
 * waits end at the stream's deadline.
 */
describe('webhooks: order events during a catalog import of the same store', () => {
  const servers: Awaited<ReturnType<typeof receiver>>[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('delivers every order status change within 3 s, p95 within 2 s, while 1,000 products are imported beside bad receivers', async () => {
    const store = await createStore();
    const created = new Set<string>();
    const changes: { reference: string; ms: number }[] = [];
    for (const kind of BAD_AND_HEALTHY) {
      const r = await receiver(kind, (event, ms) => {
        const reference = String((event.data.order as { reference: string }).reference);
        if (event.type === ORDER_CREATED) created.add(reference);
        if (event.type === ORDER_STATUS_CHANGED) changes.push({ reference, ms });
      });
      servers.push(r);
      await createKey(store, ['orders:read'], { webhook_url: r.url });
    }
    const importers = await Promise.all(
      Array.from({ length: WRITERS }, async () => client((await createKey(store, ['catalog:write'])).token)),
    );
    const orders = client((await createKey(store, ['orders:write-status'])).token);

    // The orders exist and their creation was delivered before the import: only the changes are timed.
    const references: string[] = [];
    for (let n = 0; n < CHANGES; n++) references.push((await placeOrder(store)).reference as string);
    await waitFor('every order.created delivered', () => references.every((r) => created.has(r)));

    // Ten batches at once; an item or batch refused with a retryable 503 or 429 is sent again, so
    // the stream holds all 1,000 catalog events when the orders change.
    const importOne = async (api: (typeof importers)[number], w: number) => {
      let items = Array.from({ length: BATCH }, (_, i) => {
        const n = w * BATCH + i + 1;
        return { external_id: `imp-${n}`, name: `Import ${n}`, price: 100, quantity: 1, sku: `IMP-${n}` };
      });
      let written = 0;
      for (let round = 0; items.length > 0 && round < 20; round++) {
        const res = await api.post<{ data: { status: number }[] }>('/catalog/products/batch', { items });
        // A whole batch refused (the data store timed out on a starved machine) wrote nothing: sent again.
        if (res.status === 503) {
          await sleep(1000 * Number(res.headers.get('retry-after') ?? 2));
          continue;
        }
        expect(res.status).toBe(200);
        written += res.body.data.filter((d) => d.status === 200).length;
        items = items.filter((_, i) => res.body.data[i]!.status !== 200);
      }
      return written;
    };
    const t0 = Date.now();
    const imported = (await Promise.all(importers.map(importOne))).reduce((a, b) => a + b, 0);
    const importMs = Date.now() - t0;
    expect(imported).toBe(WRITERS * BATCH);

    for (const reference of references) {
      const res = await orders.post(statusPath(reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
      expect(res.status).toBe(200);
    }
    const changedAt = Date.now();
    // Where an order event waits when it is late: the stream's backlog (events not numbered yet) when the changes were in.
    const backlog = CHANGES * 2 + imported - (await numberedEvents(store));
    await waitFor('every status change delivered', () => changes.length >= CHANGES);

    const ms = changes.map((c) => c.ms);
    console.log(
      `import of ${imported} products: ${importMs} ms; ${backlog} events not numbered yet when the changes were in ` +
        `(${changedAt - t0 - importMs} ms after the import); ${CHANGES} order status changes delivered after ` +
        `p50 ${percentile(ms, 50)} ms, p95 ${percentile(ms, 95)} ms, max ${Math.max(...ms)} ms (${ms.join(', ')})`,
    );
    expect(new Set(changes.map((c) => c.reference))).toEqual(new Set(references));
    expect(Math.max(...ms)).toBeLessThanOrEqual(EVERY_MS);
    expect(percentile(ms, 95)).toBeLessThanOrEqual(P95_MS);
  });
});
