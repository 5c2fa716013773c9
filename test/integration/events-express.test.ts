import { newContext } from '#shared/context.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expediteEvent } from '#app/express-events.ts';
import { prepareStoreBatch } from '#app/fan-out.ts';
import { readOrderByReference } from '#db/order/repo.ts';
import { commitOrderChange } from '#db/order/change.repo.ts';
import { readEventLog } from '#db/event/log.repo.ts';
import { readOutboxEvents } from '#db/event/outbox.repo.ts';
import { eventPut } from '#db/event/item.ts';
import { db } from '#db/core/client.ts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { buildStatusChangedEvent, orderEventId, type OrderEvent } from '#domain/order/events.ts';
import { withStatus } from '#domain/order/rules.ts';
import { buildEvent } from '#domain/event/event.ts';
import type { Order, OrderStatus } from '#domain/order/order.ts';
import { handler as events } from '#functions/events/handler.ts';
import { ensureTable } from '#emulation/local/bootstrap.ts';
import { resetConfig } from '#shared/config.ts';
import { createStore } from '#fixtures/api.ts';
import { placeOrder } from '#fixtures/orders.ts';
import { sqsRecord } from '#fixtures/queue.ts';

/**
 * The express lane (docs/webhooks.md, "Order events first") on the real store, in a table of its
 * own whose stream nobody reads: every event stays unnumbered until this test numbers it, so which
 * path numbered what is certain, not a race with the stack's stream consumer.
 */
describe('events: the express lane numbers order events first, in their order', () => {
  const shared = process.env.TABLE_NAME;
  let store: string;

  beforeAll(async () => {
    process.env.TABLE_NAME = `express-${randomUUID().slice(0, 8)}`;
    resetConfig();
    await ensureTable();
    store = await createStore();
  });
  afterAll(() => {
    process.env.TABLE_NAME = shared;
    resetConfig();
  });

  /** The order as placed (order.created, unnumbered), read back through its reference. */
  async function placed(): Promise<Order> {
    const reference = `EXP-${randomUUID().slice(0, 8)}`;
    await placeOrder(store, { reference });
    return (await readOrderByReference(newContext(), store, reference)).order!;
  }

  /** A status change committed as the use case commits it: the order and its event together. */
  async function move(order: Order, status: OrderStatus, ms: number): Promise<{ order: Order; event: OrderEvent }> {
    const next = withStatus(order, status, new Date(Date.parse(order.updated_at) + ms).toISOString());
    const event = buildStatusChangedEvent(next, order, next.updated_at);
    expect((await commitOrderChange(newContext(), order, next, event)).kind).toBe('committed');
    return { order: next, event };
  }

  /** Every logged event of the store: sequence → event id. */
  async function logged(): Promise<Map<number, string>> {
    const page = await readEventLog(newContext(), store, 0, 100, Math.floor(Date.now() / 1000), false);
    return new Map(page.events.map((e) => [e.sequence, e.event_id]));
  }

  it('numbers an event and its unnumbered predecessors together, oldest first; a second message changes nothing', async () => {
    const before = (await logged()).size;
    const created = await placed();
    const paid = await move(created, 'paid', 1);
    const shipped = await move(paid.order, 'shipped', 2);
    expect(paid.event.follows).toBe(orderEventId(created));

    // The last change's message arrives first (its write's send overtook the earlier one's).
    const outcome = await expediteEvent(newContext(), {
      store_id: store,
      event_id: shipped.event.event_id,
      follows: paid.event.event_id,
    });
    expect(outcome).toEqual({ kind: 'expedited', numbered: 3, queued: 0 });
    const log = await logged();
    expect([...log.entries()].slice(before)).toEqual([
      [before + 1, orderEventId(created)],
      [before + 2, paid.event.event_id],
      [before + 3, shipped.event.event_id],
    ]);

    expect(await expediteEvent(newContext(), { store_id: store, event_id: paid.event.event_id })).toEqual({
      kind: 'already_numbered',
    });
    expect((await logged()).size).toBe(before + 3);
  });

  it('numbers an order event ahead of catalog events committed before it; the stream then numbers the rest, gapless', async () => {
    const before = (await logged()).size;
    const catalog = Array.from({ length: 3 }, () =>
      buildEvent('category.upserted', store, { category: { id: 1, name: 'x' } }, new Date(), { kind: 'admin' }),
    );
    await db().send(new TransactWriteCommand({ TransactItems: catalog.map(eventPut) }));
    const created = await placed();

    expect(await expediteEvent(newContext(), { store_id: store, event_id: orderEventId(created) })).toMatchObject({
      kind: 'expedited',
      numbered: 1,
    });
    // The stream reaches the batch in commit order: the catalog events, then the order event it finds numbered.
    const states = await readOutboxEvents(newContext(), store, [
      ...catalog.map((e) => e.event_id),
      orderEventId(created),
    ]);
    const batch = await prepareStoreBatch(
      newContext(),
      store,
      [...states.values()].map((s) => s.record),
    );
    expect(batch.sequences.get(orderEventId(created))).toBe(before + 1);
    expect(catalog.map((e) => batch.sequences.get(e.event_id))).toEqual([before + 2, before + 3, before + 4]);
    expect([...(await logged()).keys()]).toEqual(Array.from({ length: before + 4 }, (_, i) => i + 1));
  });

  it('numbers each event once when the lane and the stream number the same order at the same moment', async () => {
    const created = await placed();
    const paid = await move(created, 'paid', 1);
    const processing = await move(paid.order, 'processing', 2);
    const ids = [orderEventId(created), paid.event.event_id, processing.event.event_id];
    const states = await readOutboxEvents(newContext(), store, ids);
    const [, stream] = await Promise.all([
      expediteEvent(newContext(), { store_id: store, event_id: ids[2]!, follows: ids[1]! }),
      prepareStoreBatch(
        newContext(),
        store,
        ids.map((id) => states.get(id)!.record),
      ),
    ]);
    const log = await logged();
    const numbers = ids.map((id) => [...log.entries()].filter(([, e]) => e === id).map(([n]) => n));
    // Each once, in the order's order, and the same number whichever path gave it.
    for (const [i, n] of numbers.entries()) {
      expect(n).toHaveLength(1);
      expect(stream.sequences.get(ids[i]!)).toBe(n[0]);
    }
    expect(numbers[0]![0]! < numbers[1]![0]! && numbers[1]![0]! < numbers[2]![0]!).toBe(true);
    expect([...log.keys()]).toEqual(Array.from({ length: log.size }, (_, i) => i + 1));
  });

  it('leaves to the stream an event that is gone, and an order with more than 5 unnumbered events before it', async () => {
    expect(
      await expediteEvent(newContext(), { store_id: store, event_id: 'evt_0000000000000000000000000000dead' }),
    ).toEqual({
      kind: 'left_to_stream',
      reason: 'gone',
    });
    const before = (await logged()).size;
    let current = { order: await placed(), event: undefined as OrderEvent | undefined };
    const statuses: OrderStatus[] = ['paid', 'processing', 'shipped', 'processing', 'shipped', 'processing'];
    for (const [i, status] of statuses.entries()) current = await move(current.order, status, i + 1);
    expect(await expediteEvent(newContext(), { store_id: store, event_id: current.event!.event_id })).toEqual({
      kind: 'left_to_stream',
      reason: 'long_chain',
    });
    expect((await logged()).size).toBe(before);
  });

  it('answers a malformed message without a failure: the stream has the event', async () => {
    const message = (body: string) => sqsRecord(body, 'arn:aws:sqs:us-east-1:000000000000:events-express');
    const created = await placed();
    const answer = await events({
      Records: [
        message('not json'),
        message('{"store_id":1}'),
        message(JSON.stringify({ store_id: store, event_id: orderEventId(created) })),
      ],
    });
    expect(answer).toEqual({ batchItemFailures: [] });
    expect([...(await logged()).values()]).toContain(orderEventId(created));
  });
});
