import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { handler as fanOut } from '../../functions/events/handler.ts';
import { startWebhookPipeline, type WebhookPipeline } from '../../shared/local/webhook-pipeline.ts';
import { resetConfig } from '../../shared/config.ts';
import { createKey, createStore } from '../fixtures/api.ts';
import { deliveryOf, startReceiver, verify, waitFor } from '../fixtures/webhooks.ts';
import { outboxItem, streamRecord } from '../fixtures/stream-records.ts';
import { queueCounts } from '../fixtures/queue.ts';

/**
 * The queue's limits, on a pipeline of this file's own with a shortened plan: retry after 1 s,
 * then after 6 s, and at most 2 s spent in flight or in one delayed hop (production: 900 s).
 * So the second wait is spent as delayed copies (2 s, 2 s, 2 s), as a 24 h wait is in AWS.
 */
let pipeline: WebhookPipeline;

describe('webhooks: waits beyond the in-flight limit', () => {
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  beforeAll(async () => {
    process.env.WEBHOOK_RETRY_SCHEDULE = '1,6';
    process.env.WEBHOOK_QUEUE_WAIT_LIMIT_SECONDS = '2';
    resetConfig();
    pipeline = await startWebhookPipeline({ streamArn: undefined, endpoint: inject('dynamodbEndpoint'), requeuePending: false });
  });
  afterAll(async () => {
    await pipeline?.stop();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };

  it('waits as a delayed message, not an in-flight one, and still delivers when due', async () => {
    const r = await receiver((_req, n) => ({ status: n <= 2 ? 503 : 204 }));
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = outboxItem(store);
    await fanOut({ Records: [streamRecord(item)] });
    await waitFor('the second attempt', async () => (await deliveryOf(key.id, item.event_id))?.attempts === 2);
    // Waiting 6 s for the third attempt: the delivery is one delayed message and nothing is in flight.
    const [visible, inFlight, delayed] = await waitFor('the delayed copy', async () => {
      const counts = await queueCounts(pipeline.queueUrl);
      return counts[2] === 1 ? counts : null;
    });
    expect({ visible, inFlight, delayed }).toEqual({ visible: 0, inFlight: 0, delayed: 1 });
    const waiting = await deliveryOf(key.id, item.event_id);
    expect(waiting).toMatchObject({ state: 'pending', attempts: 2 });
    expect(Date.parse(waiting?.next_attempt_at ?? '')).toBeGreaterThan(Date.now());

    const done = await waitFor('the third attempt', async () => {
      const d = await deliveryOf(key.id, item.event_id);
      return d?.state === 'delivered' ? d : null;
    });
    expect(done.attempts).toBe(3);
    expect(r.received).toHaveLength(3);
    // Not before its due time: the hops carried it, they did not attempt early.
    expect(r.received[2]!.at).toBeGreaterThanOrEqual(Date.parse(waiting?.next_attempt_at ?? '') - 1000);
    expect(() => verify(key.webhook_secret, r.received[2]!)).not.toThrow();
    await waitFor('an empty queue', async () => (await queueCounts(pipeline.queueUrl)).every((n) => n === 0));
  });
});
