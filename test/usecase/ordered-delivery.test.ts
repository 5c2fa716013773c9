import { describe, expect, it } from 'vitest';
import { newContext } from '#shared/context.ts';
import { createDelivery, getDelivery, updateDelivery } from '#db/webhook/delivery.repo.ts';
import { readLogPage } from '#db/event/log.repo.ts';
import { eventView } from '#domain/event/event.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';
import { eventBody, newDelivery, type Delivery } from '#domain/webhook/delivery.ts';
import { activeEndpoint } from '#domain/webhook/endpoint.ts';
import type { PostResult } from '#domain/webhook/deliverable.ts';
import {
  accepted,
  changeKeyDestination,
  existingKey,
  newKey,
  numberEvents,
  patchProduct,
  placeTestOrder,
  productPatch,
  putProduct,
  productWrite,
  runOrderedGroup,
  storeWithCaller,
  unique,
} from '#fixtures/usecase.ts';
import type { OrderedKey } from '#app/ordered-delivery.ts';
import { setMetricsEnabled } from '#shared/metrics.ts';

// Each delivery's EMF line is for CloudWatch; here it would only fill the report.
setMetricsEnabled(false);

/**
 * An ordered (SQS FIFO) destination's run (shared/app/ordered-delivery.ts) called in-process, with a
 * send that records what it was handed: the store's log decides the order, whatever order the
 * fan-out made the deliveries in or whether it made them yet, and a head waiting for its retry holds
 * every later event of its group. The queue, the role and the retry's message are
 * test/integration/destinations.test.ts's and test/load/destinations-fifo.test.ts's.
 */
const QUEUE = {
  kind: 'sqs' as const,
  queue_url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/store-events.fifo',
  queue_arn: 'arn:aws:sqs:eu-west-1:123456789012:store-events.fifo',
  role_arn: 'arn:aws:iam::123456789012:role/store-events-crm',
  fifo: true,
};

/** A store, a FIFO key on product.created, and `n` product creates numbered in the log. */
async function storeWithFifoKey() {
  const { storeId, caller } = await storeWithCaller();
  const { caller: reader } = await newKey(storeId, ['catalog:read'], { events: ['product.created'] });
  expect(await changeKeyDestination(reader.keyId, QUEUE)).toMatchObject({ destination: QUEUE, ordered_from: 0 });
  const create = async (n: number) => {
    for (let i = 0; i < n; i++)
      accepted(await putProduct(caller, unique('p'), productWrite({ name: `Chair ${i}`, price: 100 + i })));
    await numberEvents(storeId);
  };
  return { storeId, keyId: reader.keyId, create, caller };
}

/** The delivery the fan-out makes of the logged event of `sequence` for `key`. */
async function fanOutMakes(key: KeyRecord, sequence: number, patch: Partial<Delivery> = {}) {
  const e = (await readLogPage(newContext(), key.store_id, sequence - 1, 1)).events[0]!;
  const now = new Date().toISOString();
  await createDelivery(newContext(), {
    ...newDelivery(
      {
        key_id: key.id,
        event_id: e.event_id,
        event_type: e.event_type,
        store_id: key.store_id,
        queued_round: 0,
        body: eventBody({ ...eventView(e, key.id) }),
      },
      now,
    ),
    ...patch,
  });
  return e;
}

function recordingSend() {
  const sent: { sequence: number; body: string }[] = [];
  const send = async (_key: unknown, d: Delivery): Promise<PostResult> => {
    sent.push({ sequence: (JSON.parse(d.body) as { sequence: number }).sequence, body: d.body });
    return { status: 200, error: null, retryAfterSeconds: undefined, ms: 1 };
  };
  return { sent, ports: { send, announce: async () => undefined } };
}

const run = async (keyId: number, ports: ReturnType<typeof recordingSend>['ports']) =>
  runOrderedGroup({
    key: (await existingKey(keyId)) as OrderedKey,
    family: 'catalog',
    endpoint: activeEndpoint(keyId),
    ports,
    lane: 'fast',
    probe: false,
    startedMs: Date.now(),
  });

describe('ordered delivery', () => {
  it('sends a group in sequence order whatever order the fan-out made its deliveries in, making the missing ones from the log', async () => {
    const { keyId, create } = await storeWithFifoKey();
    await create(8);
    const key = await existingKey(keyId);
    // The fan-out got to 5, 2 and 7 first (16 events at once); the rest it has not made yet.
    for (const sequence of [5, 2, 7]) await fanOutMakes(key, sequence);
    const { sent, ports } = recordingSend();
    expect(await run(keyId, ports)).toEqual({ state: 'idle', attempted: true });
    expect(sent.map((s) => s.sequence)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    // A delivery the run made is byte for byte the one the fan-out makes.
    const logged = (await readLogPage(newContext(), key.store_id, 0, 8)).events;
    expect(sent.map((s) => s.body)).toEqual(logged.map((e) => eventBody({ ...eventView(e, keyId) })));
    for (const e of logged) expect((await getDelivery(newContext(), keyId, e.event_id))?.state).toBe('delivered');
    // Run again: nothing is sent twice.
    expect(await run(keyId, ports)).toEqual({ state: 'idle', attempted: false });
    expect(sent).toHaveLength(8);
  });

  it('holds every later event of the group while its head waits for a retry, then sends them after it', async () => {
    const { keyId, create } = await storeWithFifoKey();
    await create(3);
    const key = await existingKey(keyId);
    const later = new Date(Date.now() + 60_000).toISOString();
    const head = await fanOutMakes(key, 1, { round_attempts: 1, attempts: 1, next_attempt_at: later });
    for (const sequence of [2, 3]) await fanOutMakes(key, sequence);
    const { sent, ports } = recordingSend();
    expect(await run(keyId, ports)).toEqual({ state: 'waiting', attempted: false });
    expect(sent).toEqual([]);

    // Its retry comes due (the delayed message that brings it back is the signer's): all three, in order.
    await updateDelivery(newContext(), keyId, head.event_id, 0, {
      state: 'pending',
      attempted: false,
      next_attempt_at: new Date().toISOString(),
      now: new Date().toISOString(),
    });
    expect(await run(keyId, ports)).toEqual({ state: 'idle', attempted: true });
    expect(sent.map((s) => s.sequence)).toEqual([1, 2, 3]);
  });

  it('passes events failed for good, other families and types the key did not choose', async () => {
    const { storeId, keyId, create, caller } = await storeWithFifoKey();
    await create(2);
    const xid = unique('p');
    accepted(await putProduct(caller, xid, productWrite({ name: 'Stool', price: 10 })));
    accepted(await patchProduct(caller, xid, productPatch({ price: 12 })));
    await placeTestOrder(storeId);
    await numberEvents(storeId);
    const key = await existingKey(keyId);
    // 1 and 2 product.created (1 failed for good), 3 product.created, 4 product.updated (not chosen), 5 order.created (orders).
    await fanOutMakes(key, 1, { state: 'failed', next_attempt_at: null });
    const { sent, ports } = recordingSend();
    expect(await run(keyId, ports)).toEqual({ state: 'idle', attempted: true });
    expect(sent.map((s) => s.sequence)).toEqual([2, 3]);
  });
});
