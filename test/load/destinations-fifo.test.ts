import { CreateQueueCommand } from '@aws-sdk/client-sqs';
import { newContext } from '#shared/context.ts';
import { afterAll, describe, expect, it } from 'vitest';
import { handler as fanOut } from '#functions/events/handler.ts';
import { batchWrite } from '#db/core/helpers.ts';
import { keys } from '#db/keys.ts';
import { buildEvent, keyOrigin } from '#domain/event/event.ts';
import { resetConfig } from '#shared/config.ts';
import { setLogSink } from '#shared/log.ts';
import { setMetricsEnabled } from '#shared/metrics.ts';
import { useOwnPipeline } from '#fixtures/own-pipeline.ts';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { recordedDeliveries, waitFor } from '#fixtures/webhooks.ts';
import { streamRecord } from '#fixtures/stream-records.ts';
import { integratorSide } from '#fixtures/destinations.ts';

const EVENTS = 1000;
const DOWN_MS = 30_000;

/**
 * The ordering promise of a FIFO destination (docs/destinations.md, "Order"): 1,000 product events of
 * one store's import, handed to the fan-out Lambda as the table stream hands an import over (batches
 * of 100, in commit order), reach the integrator's FIFO queue in sequence order, each once, although
 * the queue does not exist for the first 30 s (every send fails: the head retries, the endpoint is
 * parked, probed, and drained while the rest of the import is still being fanned out). A signer that attempted each delivery on its own would put the
 * retried head behind the later events. On a pipeline of this file's own (parking after 3 failures
 * over 2 s, a probe every second); the outbox items are stored under a type the shared stack's stream
 * consumer passes by, so only this file's fan-out sees them.
 */
describe('a FIFO destination during an outage', () => {
  const { destinations } = useOwnPipeline({
    before: () => {
      process.env.WEBHOOK_RETRY_SCHEDULE = '1,1,2';
      process.env.WEBHOOK_PARK_AFTER_FAILURES = '3';
      process.env.WEBHOOK_PARK_AFTER_SECONDS = '2';
      process.env.WEBHOOK_PROBE_INTERVAL_SECONDS = '1';
      resetConfig();
      // 1,000 deliveries' log lines and metrics would drown the report.
      setLogSink(() => undefined);
      setMetricsEnabled(false);
    },
  });
  let side: ReturnType<typeof integratorSide> | undefined;
  afterAll(() => {
    side?.close();
    setLogSink((line) => process.stdout.write(line + '\n'));
  });

  it('receives 1,000 events of an import in sequence order, each once, though it fails for the first 30 s', async () => {
    side = integratorSide(destinations());
    const store = await createStore();
    const importer = await createKey(store, ['catalog:write']);
    const key = (await createKey(store, ['catalog:read'], { events: 'product.created' })) as Awaited<
      ReturnType<typeof createKey>
    > & { aws_external_id: string };
    // The queue's URL as the emulator will give it; the queue itself comes DOWN_MS later.
    const name = `import-${key.id}.fifo`;
    const queueUrl = `http://sqs.us-east-1.127.0.0.1:${new URL(destinations().sqs).port}/000000000000/${name}`;
    await adminCommand('keys set-destination', {
      id: key.id,
      sqs_queue_url: queueUrl,
      role_arn: await side.role(key.aws_external_id),
    });

    const now = Date.now();
    const items = Array.from({ length: EVENTS }, (_, i) => {
      const event = buildEvent(
        'product.created',
        store,
        { product: { id: i + 1, name: `Imported ${i + 1}`, status: 'active', offers: [] } },
        new Date(now + i),
        keyOrigin(importer.id),
      );
      return { ...keys.outboxEvent(store, event.event_id), type: 'outbox', ...event };
    });
    await batchWrite(
      newContext(),
      items.map((item) => ({ PutRequest: { Item: { ...item, type: 'outbox-fixture' } } })),
    );
    // The import goes on while the queue is down and after it comes up: the fan-out in stream order,
    // the queue made 30 s in, whatever the fan-out has reached by then.
    const started = Date.now();
    const fanOutDone = (async () => {
      for (let i = 0; i < EVENTS; i += 100)
        await fanOut({ Records: items.slice(i, i + 100).map((it) => streamRecord(it)) });
      return Date.now() - started;
    })();

    await new Promise((r) => setTimeout(r, DOWN_MS));
    const log = await adminCommand<{ endpoint: { state: string; last_error: string | null } }>('webhooks deliveries', {
      id: key.id,
    });
    expect(log.endpoint.state).toBe('parked');
    expect(log.endpoint.last_error).toMatch(
      /SendMessage to arn:aws:sqs:us-east-1:000000000000:import-.*\.fifo: .*NonExistentQueue|QueueDoesNotExist/,
    );
    expect(await side.drain(queueUrl).catch(() => [])).toEqual([]);
    await side.sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { FifoQueue: 'true' } }));
    const up = Date.now();

    const received: { id: string; sequence: number; group: string | undefined; dedup: string | undefined }[] = [];
    await waitFor(
      'every event on the queue',
      async () => {
        for (const m of await side!.drain(queueUrl))
          received.push({
            id: m.MessageAttributes!.event_id!.StringValue!,
            sequence: Number(m.MessageAttributes!.sequence!.StringValue),
            group: m.Attributes?.MessageGroupId,
            dedup: m.Attributes?.MessageDeduplicationId,
          });
        return received.length >= EVENTS;
      },
      600_000,
      500,
    );
    const drained = Date.now() - up;
    const fannedOut = await fanOutDone;
    console.log(
      `FIFO destination: ${EVENTS} events fanned out in ${fannedOut} ms; the queue came up ${DOWN_MS / 1000} s in, all on it ${drained} ms later`,
    );

    expect(received.map((r) => r.sequence)).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
    expect(received.map((r) => r.id)).toEqual(items.map((i) => i.event_id));
    expect(new Set(received.map((r) => r.group))).toEqual(new Set([`${store}:catalog`]));
    expect(received.every((r) => r.dedup === r.id)).toBe(true);
    // The signer records an attempt after the queue took the message: the last one's record may
    // trail it.
    const recorded = await recordedDeliveries(key.id, EVENTS);
    expect(recorded.filter((d) => d.state === 'delivered')).toHaveLength(EVENTS);
    // Nothing more arrives (a late retry would be a duplicate SQS drops, or out of order).
    await new Promise((r) => setTimeout(r, 3000));
    expect(await side.drain(queueUrl)).toEqual([]);
  }, 900_000);
});
