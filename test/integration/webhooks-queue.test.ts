import { describe, expect, it } from 'vitest';
import { handler as fanOut } from '#functions/events/handler.ts';
import { useOwnPipeline } from '#fixtures/own-pipeline.ts';
import { keys } from '#db/keys.ts';
import { setLogSink } from '#shared/log.ts';
import { resetConfig } from '#shared/config.ts';
import { createKey, createStore } from '#fixtures/api.ts';
import { deliveries, deliveryOf, verify, waitFor, type Received } from '#fixtures/webhooks.ts';
import { outboxItem, storedOutboxItem, streamRecord } from '#fixtures/stream-records.ts';
import { queueCounts } from '#fixtures/queue.ts';

/**
 * The Lambdas' own contracts, driven the way their event-source mappings drive them: this file
 * runs a queue of its own (the local pipeline without its stream side) and hands the fan-out
 * Lambda DynamoDBStreamEvents itself, so it can send exact duplicates and poison records. Nothing
 * here is written to the outbox, so the test stack's own pipeline never sees these events.
 */
describe('webhooks: the fan-out and signer Lambdas on a real queue', () => {
  const { queues, receiver } = useOwnPipeline();

  /**
   * "Nothing more arrives", without a sleep: fans out a later event and waits until `r` has it.
   * The fan-out queued whatever the earlier records produced before it returned, so all of it was
   * queued ahead of the marker. Returns the marker's event id.
   */
  async function afterLaterFanOut(store: string, r: { received: Received[] }): Promise<string> {
    const marker = await storedOutboxItem(store);
    await fanOut({ Records: [streamRecord(marker)] });
    await waitFor('the later marker event', () => r.received.some((q) => q.headers['webhook-id'] === marker.event_id));
    return marker.event_id;
  }

  it('turns duplicate stream records into one delivery per key', async () => {
    const r = await receiver();
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = await storedOutboxItem(store);
    // The same record twice in one batch, then again in a later batch (a retried shard).
    expect(await fanOut({ Records: [streamRecord(item), streamRecord(item)] })).toEqual({ batchItemFailures: [] });
    await waitFor('the delivery', () => r.received.length === 1);
    expect(await fanOut({ Records: [streamRecord(item)] })).toEqual({ batchItemFailures: [] });
    await afterLaterFanOut(store, r);
    const ofItem = r.received.filter((q) => q.headers['webhook-id'] === item.event_id);
    expect(ofItem).toHaveLength(1);
    expect(() => verify(key.webhook_secret, ofItem[0]!)).not.toThrow();
    expect((await deliveries(key.id)).filter((d) => d.event_id === item.event_id)).toHaveLength(1);
  });

  it('applies the stream filter itself: updates, deletes and other entities are not events', async () => {
    const r = await receiver();
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = await storedOutboxItem(store);
    const other = { ...outboxItem(store), type: 'order' };
    await fanOut({ Records: [streamRecord(item, 'MODIFY'), streamRecord(item, 'REMOVE'), streamRecord(other)] });
    const marker = await afterLaterFanOut(store, r);
    expect(r.received.map((q) => q.headers['webhook-id'])).toEqual([marker]);
    expect((await deliveries(key.id)).map((d) => d.event_id)).toEqual([marker]);
  });

  it('logs one info line per invocation that queued deliveries, and none for one that queued nothing', async () => {
    const r = await receiver();
    const subscribed = await createStore();
    const quiet = await createStore();
    const key = await createKey(subscribed, ['orders:read'], { webhook_url: r.url });
    await createKey(quiet, ['orders:read']);
    const items = [
      await storedOutboxItem(subscribed),
      await storedOutboxItem(quiet),
      await storedOutboxItem(subscribed),
      await storedOutboxItem(quiet),
    ];
    const unheard = await storedOutboxItem(quiet);
    const logged: string[] = [];
    const level = process.env.LOG_LEVEL;
    process.env.LOG_LEVEL = 'info';
    resetConfig();
    setLogSink((line) => logged.push(line));
    try {
      expect(await fanOut({ Records: items.map((item) => streamRecord(item)) })).toEqual({ batchItemFailures: [] });
      expect(await fanOut({ Records: [streamRecord(unheard)] })).toEqual({ batchItemFailures: [] });
    } finally {
      setLogSink((line) => process.stdout.write(line + '\n'));
      process.env.LOG_LEVEL = level;
      resetConfig();
    }
    // CloudWatch bills every line: not one per event, and none for events nobody receives.
    // The signer of this file's own pipeline logs its deliveries through the same sink.
    const fanOutLines = logged.map((l) => JSON.parse(l)).filter((l) => String(l.msg).startsWith('webhook fan-out'));
    expect(fanOutLines).toEqual([
      expect.objectContaining({
        level: 'info',
        msg: 'webhook fan-out',
        records: 4,
        stores: 2,
        queued: 2,
        failed_at: null,
      }),
    ]);
    await waitFor('both deliveries', async () => (await deliveries(key.id)).length === 2);
  });

  it('reports a poison record by its sequence number and stops there, so the shard resumes from it', async () => {
    const r = await receiver();
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const before = await storedOutboxItem(store);
    const after = await storedOutboxItem(store);
    const poison = streamRecord({ ...keys.outboxEvent(store, 'evt_broken'), type: 'outbox', event_id: 'evt_broken' });
    const logged: string[] = [];
    setLogSink((line) => logged.push(line));
    const result = await fanOut({ Records: [streamRecord(before), poison, streamRecord(after)] });
    setLogSink((line) => process.stdout.write(line + '\n'));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: poison.dynamodb?.SequenceNumber }]);
    expect(logged.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: 'webhook fan-out failed',
        sequence_number: poison.dynamodb?.SequenceNumber,
      }),
    );
    await waitFor(
      'the record before the poison',
      async () => (await deliveryOf(key.id, before.event_id))?.state === 'delivered',
    );
    expect(await deliveryOf(key.id, after.event_id)).toBeUndefined();
    // What bisection and the retry limit leave behind: the batch without the poison record.
    expect(await fanOut({ Records: [streamRecord(after)] })).toEqual({ batchItemFailures: [] });
    await waitFor(
      'the record after the poison',
      async () => (await deliveryOf(key.id, after.event_id))?.state === 'delivered',
    );
  });

  it('finishes a delivery given up on: failed in the log, its message deleted, not dead-lettered', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = await storedOutboxItem(store);
    await fanOut({ Records: [streamRecord(item)] });
    await waitFor('failed in the log', async () => (await deliveryOf(key.id, item.event_id))?.state === 'failed');
    expect(r.received).toHaveLength(4);
    // The log holds the outcome; the dead-letter queue is for what the signer could not handle.
    await waitFor('an empty queue', async () => (await queueCounts(queues().queueUrl)).every((n) => n === 0));
    expect(await queueCounts(queues().deadLetterQueueUrl)).toEqual([0, 0, 0]);
    expect(r.received).toHaveLength(4);
  });
});
