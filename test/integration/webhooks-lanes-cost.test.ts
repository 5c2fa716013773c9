import { newContext } from '#shared/context.ts';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '#functions/webhooks/handler.ts';
import { db, tableName } from '#db/core/client.ts';
import { costOf } from '#fixtures/context.ts';
import { keys } from '#db/keys.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { createDelivery, getDelivery } from '#db/webhook/delivery.repo.ts';
import { getEndpoint, recordEndpointFailure, takeAttemptSlot } from '#db/webhook/endpoint.repo.ts';
import { resetConfig } from '#shared/config.ts';
import { newDelivery, type Delivery } from '#domain/webhook/delivery.ts';
import { createKey, createStore } from '#fixtures/api.ts';
import { newEventId, startReceiver } from '#fixtures/webhooks.ts';
import { sqsRecord } from '#fixtures/queue.ts';

/**
 * What the slow lane adds to an attempt, counted in the request context of the signer Lambda invoked
 * in-process with the record its event source mapping would hand it. Only attempts that succeed
 * are measured here: they touch no queue, so no queue is needed (a failure's retry and a move
 * or deferral are one SQS call each, docs/webhooks.md's cost table).
 */
const SLOW_ARN = 'arn:aws:sqs:us-east-1:000000000000:cost-webhooks-slow';
const FAST_ARN = 'arn:aws:sqs:us-east-1:000000000000:cost-webhooks';

const recordOf = (d: Delivery, arn: string): SQSEvent => ({
  Records: [sqsRecord(JSON.stringify({ event_id: d.event_id, key_id: d.key_id, round: 0 }), arn, `m-${d.event_id}`)],
});

async function pendingDelivery(storeId: string, keyId: number): Promise<Delivery> {
  const now = new Date().toISOString();
  const d = newDelivery(
    {
      key_id: keyId,
      event_id: newEventId(),
      event_type: 'order.status_changed',
      store_id: storeId,
      queued_round: 0,
      body: '{"id":"evt","type":"order.status_changed","data":{}}',
    },
    now,
  );
  await createDelivery(newContext(), d);
  return d;
}

describe('webhooks: what the slow lane costs an attempt', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let storeId: string;
  beforeAll(async () => {
    process.env.WEBHOOK_SLOW_QUEUE_URL = 'http://127.0.0.1:1/000000000000/cost-webhooks-slow';
    resetConfig();
    receiver = await startReceiver();
    storeId = await createStore();
  });
  afterAll(async () => {
    delete process.env.WEBHOOK_SLOW_QUEUE_URL;
    resetConfig();
    await receiver.close();
  });

  it('costs a healthy endpoint’s attempt in the fast lane 3 GetItem and 2 UpdateItem (the claim, the outcome)', async () => {
    const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
    const d = await pendingDelivery(storeId, key.id);
    const { result, stats } = await costOf(`m-${d.event_id}`, () => handler(recordOf(d, FAST_ARN)));
    expect(result.batchItemFailures).toEqual([]);
    expect((await getDelivery(newContext(), key.id, d.event_id))?.state).toBe('delivered');
    expect([...stats.ops].sort()).toEqual(['GetItem', 'GetItem', 'GetItem', 'UpdateItem', 'UpdateItem']);
    console.log(`fast lane, healthy: ${stats.calls} round trips, ${stats.rcu} RCU, ${stats.wcu} WCU`);
  });

  it('adds one UpdateItem (the slot) to a slow-lane attempt, whose success gives the slot back and closes the circuit', async () => {
    const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
    for (let i = 0; i < 3; i++) await recordEndpointFailure(newContext(), key.id, new Date().toISOString(), 'HTTP 500');
    const d = await pendingDelivery(storeId, key.id);
    const { result, stats } = await costOf(`m-${d.event_id}`, () => handler(recordOf(d, SLOW_ARN)));
    expect(result.batchItemFailures).toEqual([]);
    expect((await getDelivery(newContext(), key.id, d.event_id))?.state).toBe('delivered');
    // key, delivery, endpoint; the claim; the slot; the delivery; the endpoint's streak reset with the slot given back.
    expect([...stats.ops].sort()).toEqual([
      'GetItem',
      'GetItem',
      'GetItem',
      'UpdateItem',
      'UpdateItem',
      'UpdateItem',
      'UpdateItem',
    ]);
    const endpoint = await getEndpoint(newContext(), key.id);
    expect(endpoint.consecutive_failures).toBe(0);
    expect(endpoint.attempt_slots).toEqual({});
    console.log(`slow lane, success: ${stats.calls} round trips, ${stats.rcu} RCU, ${stats.wcu} WCU`);
  });

  it('POSTs once when two copies of a message arrive at the same moment; the other copy waits for the outcome', async () => {
    const before = receiver.received.length;
    const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
    const d = await pendingDelivery(storeId, key.id);
    const answers = await Promise.all([handler(recordOf(d, FAST_ARN)), handler(recordOf(d, FAST_ARN))]);
    // The copy that held the attempt answered; the other one asked to wait (its visibility change
    // goes to this test's unreachable queue, so it stays failed and is received again later).
    expect(answers.filter((a) => a.batchItemFailures.length === 0).length).toBeGreaterThanOrEqual(1);
    expect((await getDelivery(newContext(), key.id, d.event_id))?.state).toBe('delivered');
    expect(receiver.received.slice(before).filter((r) => r.headers['webhook-id'] === d.event_id)).toHaveLength(1);
    // The outcome gave the claim back: the item holds none.
    const item = await db().send(new GetCommand({ TableName: tableName(), Key: keys.delivery(key.id, d.event_id) }));
    expect(item.Item).toBeDefined();
    expect(item.Item).not.toHaveProperty('claimed_until');
  });

  it('refuses a third attempt at once while two slots are held, and frees a slot whose lease has ended', async () => {
    const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
    const now = new Date();
    const until = new Date(now.getTime() + 60_000).toISOString();
    expect(await takeAttemptSlot(newContext(), key.id, 0, now.toISOString(), until)).toBe(true);
    expect(await takeAttemptSlot(newContext(), key.id, 0, now.toISOString(), until)).toBe(false);
    expect(await takeAttemptSlot(newContext(), key.id, 1, now.toISOString(), until)).toBe(true);
    expect(Object.keys((await getEndpoint(newContext(), key.id)).attempt_slots)).toEqual(['0', '1']);
    // A crashed attempt's slot: free once its lease has passed.
    const later = new Date(now.getTime() + 61_000).toISOString();
    expect(await takeAttemptSlot(newContext(), key.id, 1, later, new Date(now.getTime() + 120_000).toISOString())).toBe(
      true,
    );
  });
});
