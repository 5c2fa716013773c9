import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { randomUUID } from 'node:crypto';
import { marshall } from '@aws-sdk/util-dynamodb';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { DynamoDBRecord } from 'aws-lambda';
import { handler as fanOut } from '../../functions/events/handler.ts';
import { startWebhookPipeline, type WebhookPipeline } from '../../shared/local/webhook-pipeline.ts';
import { sqs } from '../../shared/queue/sqs.ts';
import { keys } from '../../shared/db/keys.ts';
import { setLogSink } from '../../shared/log.ts';
import { createKey, createStore } from '../fixtures/api.ts';
import { deliveries, deliveryOf, newEventId, sampleOrder, sleep, startReceiver, verify, waitFor } from '../fixtures/webhooks.ts';

/**
 * The Lambdas' own contracts, driven the way their event-source mappings drive them: this file
 * runs a queue of its own (the local pipeline without its stream side) and hands the fan-out
 * Lambda DynamoDBStreamEvents itself, so it can send exact duplicates and poison records. Nothing
 * here is written to the outbox, so the test stack's own pipeline never sees these events.
 */
let pipeline: WebhookPipeline;
let sequence = 1000;

function streamRecord(item: Record<string, unknown>, eventName: 'INSERT' | 'MODIFY' | 'REMOVE' = 'INSERT'): DynamoDBRecord {
  const seq = String(++sequence).padStart(21, '0');
  return {
    eventID: randomUUID(),
    eventName,
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: marshall({ pk: item.pk, sk: item.sk }) as never,
      NewImage: marshall(item, { removeUndefinedValues: true }) as never,
      SequenceNumber: seq,
      SizeBytes: 100,
      StreamViewType: 'NEW_IMAGE',
    },
    eventSourceARN: 'arn:aws:dynamodb:us-east-1:000000000000:table/test/stream/x',
  };
}

function outboxItem(storeId: string, eventId = newEventId()) {
  const order = sampleOrder();
  const now = new Date().toISOString();
  return {
    ...keys.outboxEvent(storeId, eventId),
    type: 'outbox',
    event_id: eventId,
    event_type: 'order.status_changed',
    store_id: storeId,
    created_at: now,
    ttl: Math.floor(Date.now() / 1000) + 7 * 86400,
    payload: { type: 'order.status_changed', timestamp: now, data: { order, previous_status: 'paid', status: order.status } },
  };
}

describe('webhooks: the fan-out and signer Lambdas on a real queue', () => {
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  beforeAll(async () => {
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

  it('turns duplicate stream records into one delivery per key', async () => {
    const r = await receiver();
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = outboxItem(store);
    // The same record twice in one batch, then again in a later batch (a retried shard).
    expect(await fanOut({ Records: [streamRecord(item), streamRecord(item)] })).toEqual({ batchItemFailures: [] });
    await waitFor('the delivery', () => r.received.length === 1);
    expect(await fanOut({ Records: [streamRecord(item)] })).toEqual({ batchItemFailures: [] });
    await sleep(1500);
    expect(r.received).toHaveLength(1);
    expect(() => verify(key.webhook_secret, r.received[0]!)).not.toThrow();
    expect(await deliveries(key.id)).toHaveLength(1);
  });

  it('applies the stream filter itself: updates, deletes and other entities are not events', async () => {
    const r = await receiver();
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = outboxItem(store);
    const other = { ...outboxItem(store), type: 'order' };
    await fanOut({ Records: [streamRecord(item, 'MODIFY'), streamRecord(item, 'REMOVE'), streamRecord(other)] });
    await sleep(1000);
    expect(r.received).toHaveLength(0);
    expect(await deliveries(key.id)).toEqual([]);
  });

  it('reports a poison record by its sequence number and stops there, so the shard resumes from it', async () => {
    const r = await receiver();
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const before = outboxItem(store);
    const after = outboxItem(store);
    const poison = streamRecord({ ...keys.outboxEvent(store, 'evt_broken'), type: 'outbox', event_id: 'evt_broken' });
    const logged: string[] = [];
    setLogSink((line) => logged.push(line));
    const result = await fanOut({ Records: [streamRecord(before), poison, streamRecord(after)] });
    setLogSink((line) => process.stdout.write(line + '\n'));
    expect(result.batchItemFailures).toEqual([{ itemIdentifier: poison.dynamodb?.SequenceNumber }]);
    expect(logged.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'webhook fan-out failed', sequence_number: poison.dynamodb?.SequenceNumber }),
    );
    await waitFor('the record before the poison', async () => (await deliveryOf(key.id, before.event_id))?.state === 'delivered');
    expect(await deliveryOf(key.id, after.event_id)).toBeUndefined();
    // What bisection and the retry limit leave behind: the batch without the poison record.
    expect(await fanOut({ Records: [streamRecord(after)] })).toEqual({ batchItemFailures: [] });
    await waitFor('the record after the poison', async () => (await deliveryOf(key.id, after.event_id))?.state === 'delivered');
  });

  it('moves a delivery given up on to the dead-letter queue', async () => {
    const r = await receiver(() => ({ status: 500 }));
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const item = outboxItem(store);
    await fanOut({ Records: [streamRecord(item)] });
    await waitFor('failed in the log', async () => (await deliveryOf(key.id, item.event_id))?.state === 'failed', 20_000);
    expect(r.received).toHaveLength(4);
    const dead = await waitFor(
      'the dead-letter queue',
      async () => {
        const out = await sqs().send(new ReceiveMessageCommand({ QueueUrl: pipeline.deadLetterQueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
        return out.Messages?.find((m) => m.Body?.includes(item.event_id));
      },
      20_000,
    );
    expect(JSON.parse(dead.Body ?? '')).toEqual({ event_id: item.event_id, key_id: key.id, round: 0 });
    expect(r.received).toHaveLength(4);
  });
});
