import { describe, expect, it } from 'vitest';
import { handler as fanOut } from '#functions/events/handler.ts';
import { useOwnPipeline } from '#fixtures/own-pipeline.ts';
import { resetConfig } from '#shared/config.ts';
import { createKey, createStore } from '#fixtures/api.ts';
import { deliveryOf, verify, waitFor } from '#fixtures/webhooks.ts';
import { storedOutboxItem, streamRecord } from '#fixtures/stream-records.ts';
import { queueCounts } from '#fixtures/queue.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { setLogSink } from '#shared/log.ts';
import { DEAD_LETTER_ERROR } from '#app/dead-letter.ts';

/**
 * The queue's limits, on a pipeline of this file's own with a shortened plan: retry after 1 s,
 * then after 6 s, and at most 2 s spent in flight or in one delayed hop (production: 900 s).
 * So the second wait is spent as delayed copies (2 s, 2 s, 2 s), as a 24 h wait is in AWS. The
 * redrive limit is 3 receives (production: the schedule's + 30), so that a message the signer
 * cannot handle reaches the dead-letter queue, and its consumer, within seconds.
 */
describe("webhooks: the queue's in-flight and receive limits", () => {
  const { queues, receiver } = useOwnPipeline({
    maxReceiveCount: 3,
    before: () => {
      process.env.WEBHOOK_RETRY_SCHEDULE = '1,6';
      process.env.WEBHOOK_QUEUE_WAIT_LIMIT_SECONDS = '2';
      resetConfig();
    },
  });

  it('waits as a delayed message, not an in-flight one, and still delivers when due', async () => {
    const r = await receiver((_req, n) => ({ status: n <= 2 ? 503 : 204 }));
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = await storedOutboxItem(store);
    await fanOut({ Records: [streamRecord(item)] });
    await waitFor('the second attempt', async () => (await deliveryOf(key.id, item.event_id))?.attempts === 2);
    // Waiting 6 s for the third attempt: between hops the delivery is one delayed message and
    // nothing is in flight (during a hop, for milliseconds, the received copy is in flight until
    // deleted). With the wait spent as visibility, this state never comes and the probe times out.
    // The delivery is read in the same probe, so that a slow poll cannot see the queue of one
    // moment and the record of a later one (after the third attempt).
    const { counts, waiting } = await waitFor('one delayed copy and nothing in flight', async () => {
      const counts = await queueCounts(queues().queueUrl);
      const waiting = await deliveryOf(key.id, item.event_id);
      return counts[1] === 0 && counts[2] === 1 && waiting?.attempts === 2 ? { counts, waiting } : null;
    });
    expect(counts[0]).toBe(0);
    expect(waiting).toMatchObject({ state: 'pending', attempts: 2 });
    // Due about 6 s after the second attempt, whenever this probe happened to run.
    expect(Date.parse(waiting.next_attempt_at ?? '')).toBeGreaterThanOrEqual(r.received[1]!.at + 5000);

    const done = await waitFor('the third attempt', async () => {
      const d = await deliveryOf(key.id, item.event_id);
      return d?.state === 'delivered' ? d : null;
    });
    expect(done.attempts).toBe(3);
    expect(r.received).toHaveLength(3);
    // Not before its due time: the hops carried it, they did not attempt early.
    expect(r.received[2]!.at).toBeGreaterThanOrEqual(Date.parse(waiting.next_attempt_at ?? '') - 1000);
    expect(() => verify(key.webhook_secret, r.received[2]!)).not.toThrow();
    await waitFor('an empty queue', async () => (await queueCounts(queues().queueUrl)).every((n) => n === 0));
  });

  it('backs off on a platform error without counting attempts, and the dead-letter consumer marks it failed', async () => {
    const r = await receiver();
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    // A broken key record (a bug, a bad migration): signing throws, which is no fault of the receiver.
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.key(key.id),
        UpdateExpression: 'SET webhook_secret = :s',
        ExpressionAttributeValues: { ':s': 'whsec_' },
      }),
    );
    const logged: Record<string, unknown>[] = [];
    setLogSink((line) => logged.push(JSON.parse(line)));
    try {
      const item = await storedOutboxItem(store);
      await fanOut({ Records: [streamRecord(item)] });
      const failed = await waitFor('the delivery marked failed', async () => {
        const d = await deliveryOf(key.id, item.event_id);
        return d?.state === 'failed' ? d : null;
      });
      // The consumer logs after it has written the record: wait for the line, do not assume it.
      await waitFor('the dead-letter log line', () =>
        logged.some((l) => l.msg === 'webhook dead-lettered; marked failed'),
      );
      expect(failed).toMatchObject({ attempts: 0, last_status_code: null, last_error: DEAD_LETTER_ERROR });
      expect(r.received).toHaveLength(0);
      const backoffs = logged.filter((l) => l.msg === 'webhook message failed; backing off');
      // Every receive the queue allowed ended in a backoff (visibility 2 s here, the test's cap), none in an attempt.
      expect(backoffs.map((l) => [l.receive_count, l.retry_in_s])).toEqual([
        [1, 2],
        [2, 2],
        [3, 2],
      ]);
      expect(backoffs.every((l) => l.error_message === 'webhook secret is empty')).toBe(true);
      expect(logged).toContainEqual(
        expect.objectContaining({
          msg: 'webhook dead-lettered; marked failed',
          event_id: item.event_id,
          key_id: key.id,
          recorded: true,
        }),
      );
      await waitFor('an empty dead-letter queue', async () =>
        (await queueCounts(queues().deadLetterQueueUrl)).every((n) => n === 0),
      );
    } finally {
      setLogSink((line) => process.stdout.write(line + '\n'));
    }
  });
});
