import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '#emulation/local/stack.ts';
import { setLogSink } from '#shared/log.ts';
import { adminCommand, createStore, createKey } from '#fixtures/api.ts';
import { deliveryOf, putOutboxEvent, startReceiver, waitFor } from '#fixtures/webhooks.ts';
import { freePort } from '#fixtures/free-port.ts';

/**
 * `npm start` stopped and started again on the same data: this file runs a stack of its own with
 * a persistent DynamoDB Local (not the shared test stack), and restarts it.
 */
describe('webhooks: the local pipeline across a restart', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'webhooks-restart-'));
  const lines: string[] = [];
  setLogSink((line) => lines.push(line));
  let stack: LocalStack | undefined;
  const start = async (dynamodbPort: number) =>
    startLocalStack({
      port: 0,
      dynamodbPort,
      dataDir,
      tableName: 'restart-test',
      // debug: the fan-out's line per record (its info line is one per invocation).
      env: { LOG_LEVEL: 'debug', WEBHOOK_RETRY_SCHEDULE: '1,1,2' },
    });
  afterAll(async () => {
    await stack?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes the stream where it stopped and queues again what was pending', async () => {
    let up = true;
    const receiver = await startReceiver(() => ({ status: up ? 200 : 503 }));
    try {
      const port = await freePort();
      stack = await start(port);
      const store = await createStore();
      const key = await createKey(store, ['orders:read'], { webhook_url: receiver.url });

      const delivered = await putOutboxEvent(store);
      await waitFor(
        'the first event',
        async () => (await deliveryOf(key.id, delivered.eventId))?.state === 'delivered',
      );
      up = false;
      const pending = await putOutboxEvent(store);
      await waitFor('a failed attempt', async () => ((await deliveryOf(key.id, pending.eventId))?.attempts ?? 0) >= 1);

      await stack.stop();
      stack = undefined;
      lines.length = 0;
      up = true;
      stack = await start(port);

      // The pending delivery lost its in-memory queue message with the old process; the new one queues it again.
      await waitFor(
        'the pending event after the restart',
        async () => (await deliveryOf(key.id, pending.eventId))?.state === 'delivered',
      );
      const third = await putOutboxEvent(store);
      await waitFor(
        'an event written after the restart',
        async () => (await deliveryOf(key.id, third.eventId))?.state === 'delivered',
      );

      const fannedOut = lines
        .filter((l) => l.includes('"webhook fan-out"'))
        .map((l) => JSON.parse(l).event_id)
        .filter(Boolean);
      // The stream resumed after its saved position: the events before the restart were not read again.
      expect(fannedOut).toEqual([third.eventId]);
      const ids = receiver.received.map((q) => q.headers['webhook-id']);
      expect(ids.filter((id) => id === delivered.eventId)).toHaveLength(1);
      expect(ids.filter((id) => id === third.eventId)).toHaveLength(1);
      expect(ids.filter((id) => id === pending.eventId).length).toBeGreaterThanOrEqual(2);
      expect((await adminCommand<{ data: unknown[] }>('webhooks deliveries', { id: key.id })).data).toHaveLength(3);
    } finally {
      await receiver.close();
    }
  });
});
