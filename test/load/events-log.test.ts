import { newContext } from '#shared/context.ts';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminCommand, client, createKey, createStore, expectErrorShape } from '#fixtures/api.ts';
import { STREAM_WAIT_MS, startReceiver, waitFor } from '#fixtures/webhooks.ts';
import { idem, insertTestPage } from '#fixtures/content.ts';
import { orderFile } from '#fixtures/orders.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { lastSequence } from '#db/event/log.repo.ts';
import { MAX_QUERIES } from '#app/events.ts';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The store's event log (docs/webhooks.md, "How to never miss an event"): events in the write's
 * own transaction, numbered after the commit without holes, listed by GET /events, and the same
 * number in every webhook delivery.
 */
type Listed = {
  id: string;
  sequence: number;
  type: string;
  origin: { kind: string; key_id?: number } | null;
  data: Record<string, any>;
};

const product = (name: string, sku: string) => ({ name, price: 100, sku });

/** Every event of the store the token can see, following next_cursor. */
async function allEvents(token: string, query = ''): Promise<Listed[]> {
  const api = client(token);
  const out: Listed[] = [];
  let cursor: number | null = 0;
  while (cursor !== null) {
    const res: { status: number; body: any } = await api.get(`/events?limit=100&cursor=${cursor}${query}`);
    expect(res.status).toBe(200);
    out.push(...res.body.data);
    cursor = res.body.next_cursor;
  }
  return out;
}

/**
 * Waits (on the store's event counter, read directly so the polling spends no key's allowance)
 * until `count` events are numbered, then lists them through the API.
 */
async function logHolds(storeId: string, token: string, count: number, timeoutMs = 300_000): Promise<Listed[]> {
  await waitFor(
    `${count} numbered events`,
    async () => (await lastSequence(newContext(), storeId)) >= count,
    timeoutMs,
    250,
  );
  return allEvents(token);
}

describe('GET /events and numbered webhooks', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('a receiver that was away for ten changes sees the gap in the next delivery and fetches exactly those events', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read', 'catalog:write'], {
      webhook_url: receiver.url,
      events: 'product.created,product.updated',
    });
    const api = client(key.token);
    expect((await api.put('/catalog/products/first', product('First', `${storeId}-0`))).status).toBe(200);
    const firstDelivery = await waitFor('the first delivery', () =>
      receiver.received.find((r) => JSON.parse(r.body).data.product?.sku === `${storeId}-0`),
    );
    const seen = JSON.parse(firstDelivery.body).sequence as number;
    expect(Number(firstDelivery.headers['webhook-sequence'])).toBe(seen);

    // Away: the key has no URL, so nothing is delivered; the log still records every change.
    await adminCommand('keys set-webhook', { id: key.id, url: '' });
    const missed: string[] = [];
    for (let i = 1; i <= 10; i++) {
      const res = await api.put(`/catalog/products/p${i}`, product(`Missed ${i}`, `${storeId}-${i}`));
      expect(res.status).toBe(200);
      missed.push(`${storeId}-${i}`);
    }
    await adminCommand('keys set-webhook', { id: key.id, url: receiver.url });
    await api.put('/catalog/products/back', product('Back', `${storeId}-back`));
    const next = await waitFor('the next delivery', () =>
      receiver.received.find((r) => JSON.parse(r.body).data.product?.sku === `${storeId}-back`),
    );
    const arrived = JSON.parse(next.body).sequence as number;
    // The gap is visible from the numbers alone: ten events between the two deliveries.
    expect(arrived - seen - 1).toBe(10);
    const res = await api.get(`/events?cursor=${seen}&limit=${arrived - seen - 1}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((e: Listed) => e.sequence)).toEqual(Array.from({ length: 10 }, (_, i) => seen + 1 + i));
    expect(res.body.data.map((e: Listed) => e.data.product.sku)).toEqual(missed);
    expect(
      res.body.data.every(
        (e: Listed) => e.type === 'product.created' && e.origin?.kind === 'key' && e.origin.key_id === key.id,
      ),
    ).toBe(true);
    // The owning key sees its own external id.
    expect(res.body.data[0].data.product.external_id).toBe('p1');
    expect(res.body.next_cursor).toBe(seen + 10);
  });

  it('each key sees only the families it can read; exclude_own hides exactly its own changes', async () => {
    const storeId = await createStore();
    const writer = await createKey(storeId);
    const other = await createKey(storeId, ['catalog:write', 'catalog:read']);
    const ordersOnly = await createKey(storeId, ['orders:read']);
    const catalogOnly = await createKey(storeId, ['catalog:read']);
    const contentOnly = await createKey(storeId, ['content:read']);
    const w = client(writer.token);
    expect((await w.put('/catalog/products/a', product('A', `${storeId}-a`))).status).toBe(200);
    expect((await w.put('/catalog/categories/c1', { name: 'Shoes' })).status).toBe(200);
    expect((await w.put('/catalog/tags/t1', { value: 'sale' })).status).toBe(200);
    const page = await insertTestPage(storeId, writer.id);
    expect(
      (await w.post(`/content/pages/${page.external_id}/publish`, undefined, { 'Idempotency-Key': idem() })).status,
    ).toBe(200);
    expect((await client(other.token).put('/catalog/products/b', product('B', `${storeId}-b`))).status).toBe(200);
    await adminCommand('orders place', { store: storeId, file: orderFile() });
    const everything = await logHolds(storeId, writer.token, 6);
    expect(everything.map((e) => e.type).sort()).toEqual([
      'category.upserted',
      'order.created',
      'page.published',
      'product.created',
      'product.created',
      'tag.upserted',
    ]);
    expect(everything.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);

    expect((await allEvents(ordersOnly.token)).map((e) => e.type)).toEqual(['order.created']);
    expect((await allEvents(catalogOnly.token)).map((e) => e.type).sort()).toEqual([
      'category.upserted',
      'product.created',
      'product.created',
      'tag.upserted',
    ]);
    const pageEvents = await allEvents(contentOnly.token);
    expect(pageEvents.map((e) => e.type)).toEqual(['page.published']);
    // A page's external id is its owner's alone, in events as in reads.
    expect(pageEvents[0]?.data.page.external_id).toBeNull();
    expect(everything.find((e) => e.type === 'page.published')?.data.page.external_id).toBe(page.external_id);
    // Another key's product carries no external id; the order came from the storefront.
    const theirs = everything.find((e) => e.type === 'product.created' && e.origin?.key_id === other.id);
    expect(theirs?.data.product.external_id).toBeUndefined();
    expect(everything.find((e) => e.type === 'order.created')?.origin).toEqual({ kind: 'storefront' });

    const withoutOwn = await allEvents(writer.token, '&exclude_own=true');
    expect(withoutOwn.map((e) => e.origin)).toEqual([{ kind: 'key', key_id: other.id }, { kind: 'storefront' }]);
    expect((await allEvents(other.token, '&exclude_own=true')).map((e) => e.type).sort()).toEqual([
      'category.upserted',
      'product.created',
      'tag.upserted',
    ]);
    expect((await allEvents(writer.token, '&types=tag.upserted,order.created')).map((e) => e.type)).toEqual([
      'tag.upserted',
      'order.created',
    ]);
  });

  it('no-op writes, replays and ten racing PUTs of one body raise one event at most', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId);
    const api = client(key.token);
    const body = product('Race', `${storeId}-r`);
    expect((await api.put('/catalog/products/r', body)).status).toBe(200);
    expect((await api.put('/catalog/products/r', body)).status).toBe(200);
    expect((await api.patch('/catalog/products/r', { name: 'Race' })).status).toBe(200);
    const changed = { ...body, name: 'Raced' };
    const racers = await Promise.all(Array.from({ length: 10 }, () => api.put('/catalog/products/r', changed)));
    expect(racers.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect((await api.put('/catalog/categories/c', { name: 'Same' })).status).toBe(200);
    expect((await api.put('/catalog/categories/c', { name: 'Same' })).status).toBe(200);
    const page = await insertTestPage(storeId, key.id);
    const k = idem();
    expect(
      (await api.post(`/content/pages/${page.external_id}/publish`, undefined, { 'Idempotency-Key': k })).status,
    ).toBe(200);
    const replay = await api.post(`/content/pages/${page.external_id}/publish`, undefined, { 'Idempotency-Key': k });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(
      (await api.post(`/content/pages/${page.external_id}/publish`, undefined, { 'Idempotency-Key': idem() })).status,
    ).toBe(200);
    // A marker written last: once it is numbered, everything before it is too.
    await api.put('/catalog/tags/marker', { value: 'marker' });
    const events = await waitFor(
      'the marker',
      async () => {
        await waitFor(
          'a numbered event',
          async () => (await lastSequence(newContext(), storeId)) >= 1,
          STREAM_WAIT_MS,
          250,
        );
        const all = await allEvents(key.token);
        return all.some((e) => e.type === 'tag.upserted') ? all : undefined;
      },
      STREAM_WAIT_MS,
      2_000,
    );
    expect(events.map((e) => e.type)).toEqual([
      'product.created',
      'product.updated',
      'category.upserted',
      'page.published',
      'tag.upserted',
    ]);
    expect(events[1]?.data.product.name).toBe('Raced');
  });

  it('webhooks events (admin CLI) pages the whole log from --after and refuses what it cannot answer', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:write', 'catalog:read']);
    for (const x of ['a', 'b', 'c'])
      expect((await client(key.token).put(`/catalog/products/cli-${x}`, product(x, `${storeId}-${x}`))).status).toBe(
        200,
      );
    await logHolds(storeId, key.token, 3);
    const first = await adminCommand<{
      data: { sequence: number; type: string; origin: unknown }[];
      next_after: number | null;
    }>('webhooks events', { store: storeId, limit: 2 });
    expect(first.data.map((e) => e.sequence)).toEqual([1, 2]);
    expect(first.data[0]).toMatchObject({ type: 'product.created', origin: { kind: 'key', key_id: key.id } });
    expect(first.next_after).toBe(2);
    const rest = await adminCommand<{ data: { sequence: number }[]; next_after: number | null }>('webhooks events', {
      store: storeId,
      after: 2,
    });
    expect(rest).toMatchObject({ data: [{ sequence: 3 }], next_after: null });
    await expect(adminCommand('webhooks events', { store: 'no-such-store' })).rejects.toThrow(/not_found/);
    await expect(adminCommand('webhooks events', { store: storeId, limit: 0 })).rejects.toThrow(/validation_failed/);
    await expect(adminCommand('webhooks events', { store: storeId, after: -1 })).rejects.toThrow(/validation_failed/);
  });

  it('1,000 concurrent writes from 10 keys are numbered 1..1000, strictly increasing, without a hole', async () => {
    const storeId = await createStore();
    const writers = await Promise.all(
      Array.from({ length: 10 }, () => createKey(storeId, ['catalog:write', 'catalog:read'])),
    );
    const reader = await createKey(storeId, ['catalog:read']);
    type Res = { status: number; headers: Headers };
    // Each key writes 50 products one PUT at a time and 50 in five batches of ten: 55 requests, within
    // its 60 a minute, so no writer waits out the allowance and the writes really race.
    const put = (k: { token: string }, w: number, i: number) => () =>
      client(k.token).put(`/catalog/products/w${w}-${i}`, product(`W${w} ${i}`, `${storeId}-${w}-${i}`));
    const batch = (k: { token: string }, w: number, b: number) => async (): Promise<Res> => {
      const items = Array.from({ length: 10 }, (_, j) => 50 + b * 10 + j).map((i) => ({
        external_id: `w${w}-${i}`,
        ...product(`W${w} ${i}`, `${storeId}-${w}-${i}`),
      }));
      const res = await client(k.token).post('/catalog/products/batch', { items });
      // An item refused as retryable makes the whole batch worth sending again (the applied ones are then unchanged).
      const retry = res.status === 200 && res.body.data.some((r: { status: number }) => r.status >= 300);
      return { status: retry ? 503 : res.status, headers: res.headers };
    };
    const jobs = writers.flatMap((k, w) => [
      ...Array.from({ length: 50 }, (_, i) => put(k, w, i)),
      ...Array.from({ length: 5 }, (_, b) => batch(k, w, b)),
    ]);
    // Bounded: 20 requests in flight on loopback.
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++] as () => Promise<Res>;
          let res = await job();
          // A retryable refusal (the keys' 60 a minute allowance, or load) is retried as a client would, after Retry-After.
          for (let t = 0; t < 30 && [409, 429, 503].includes(res.status); t++) {
            await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? 1)));
            res = await job();
          }
          statuses.push(res.status);
        }
      }),
    );
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const events = await logHolds(storeId, reader.token, 1000, 600_000);
    expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(new Set(events.map((e) => e.id)).size).toBe(1000);
  });

  it('a cursor whose next event is past retention is 410 cursor_expired; without a cursor the list starts at the oldest kept', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId);
    const api = client(key.token);
    await api.put('/catalog/tags/one', { value: 'one' });
    await api.put('/catalog/tags/two', { value: 'two' });
    await logHolds(storeId, key.token, 2);
    // Event 1 reached its 30-day TTL (DynamoDB deletes expired items lazily, so it may still be there).
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.eventLog(storeId, 1),
        UpdateExpression: 'SET #t = :past',
        ExpressionAttributeNames: { '#t': 'ttl' },
        ExpressionAttributeValues: { ':past': 1 },
      }),
    );
    const expired = await api.get('/events?cursor=0');
    expect(expired.status).toBe(410);
    expectErrorShape(expired.body);
    expect(expired.body).toMatchObject({ code: 'cursor_expired', field: 'cursor' });
    const fresh = await api.get('/events');
    expect(fresh.body.data.map((e: Listed) => e.sequence)).toEqual([2]);
    expect((await api.get('/events?cursor=1')).status).toBe(200);
    expect((await api.get('/events?cursor=2')).body).toEqual({ data: [], next_cursor: null });
  });

  it('401 without a key, 403 for a key with no read ability, 404 for an unknown path, 422 for bad parameters', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read']);
    expect((await client(null).get('/events')).status).toBe(401);
    const writeOnly = await createKey(storeId, ['catalog:write', 'orders:write-status']);
    const forbidden = await client(writeOnly.token).get('/events');
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('forbidden');
    expect((await client(key.token, { undocumented: true }).get('/events/1')).status).toBe(404);
    for (const [query, field] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['cursor=-1', 'cursor'],
      ['types=order.deleted', 'types'],
      ['exclude_own=yes', 'exclude_own'],
      ['after=3', 'after'],
    ] as const) {
      const res = await client(key.token).get(`/events?${query}`);
      expect(res.status, query).toBe(422);
      expect(res.body.field, query).toBe(field);
    }
  });

  it('answers an empty page with a next_cursor when its read budget meets only events the key cannot see', async () => {
    const storeId = await createStore();
    const writer = client((await createKey(storeId)).token);
    const ordersOnly = client((await createKey(storeId, ['orders:read'])).token);
    // With limit=1 each Query reads one entry: MAX_QUERIES catalog events fill the whole budget.
    for (let i = 1; i <= MAX_QUERIES; i++)
      expect((await writer.put(`/catalog/products/p${i}`, product(`P${i}`, `${storeId}-${i}`))).status).toBe(200);
    await adminCommand('orders place', { store: storeId, file: orderFile() });
    await waitFor(
      'the order event numbered',
      async () => (await lastSequence(newContext(), storeId)) >= MAX_QUERIES + 1,
    );

    const first = await ordersOnly.get('/events?limit=1');
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ data: [], next_cursor: MAX_QUERIES });
    const next = await ordersOnly.get(`/events?limit=1&cursor=${first.body.next_cursor}`);
    expect(next.body.data.map((e: Listed) => [e.sequence, e.type])).toEqual([[MAX_QUERIES + 1, 'order.created']]);

    // docs/webhooks.md states the budget and tells a client to follow next_cursor through empty pages.
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/webhooks.md'), 'utf8');
    expect(doc).toContain('### Empty pages');
    expect(doc).toContain(`a request reads at most ${MAX_QUERIES} Queries of the log`);
  });
});
