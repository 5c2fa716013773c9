import { beforeAll, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import {
  baseUrl,
  client,
  createKey,
  createStore,
  expectErrorShape,
  storeWithKey,
  type TestKey,
} from '#fixtures/api.ts';
import { eventsOfOrder, idemKey, insertTestOrder, placeOrder, statusPath } from '#fixtures/orders.ts';
import { db, tableName } from '#db/core/client.ts';
import { idempotencyRecordKey } from '#db/idempotency/repo.ts';
import { putIdempotencyRecord } from '#fixtures/idempotency.ts';
import { requestFingerprint } from '#domain/idempotency.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

type Api = ReturnType<typeof client>;

/** The scope the server uses for a status change of `reference` by `key`. */
const scopeOf = (key: TestKey, reference: string, idem: string) => ({
  keyId: key.id,
  method: 'POST',
  path: `${API_BASE_PATH}/orders/${reference}/status`,
  key: idem,
});

describe('POST /orders/{reference}/status: replays', () => {
  let storeId: string;
  let api: Api;
  let key: TestKey;
  beforeAll(async () => {
    const s = await storeWithKey(['orders:read', 'orders:write-status']);
    storeId = s.storeId;
    api = s.client;
    key = s.key;
  });

  it('replays a success byte for byte, with no second change or event', async () => {
    const placed = await placeOrder(storeId);
    const k = idemKey();
    const first = await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': k });
    expect(first.status).toBe(200);
    await new Promise((r) => setTimeout(r, 5));
    // The same request again, spelt differently (whitespace, key order are not "different").
    const again = await api.post(statusPath(placed.reference), '{ "status" : "processing" }', { 'Idempotency-Key': k });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
    // The replay says it is one; each answer has its own request id.
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-request-id')).toMatch(/\S/);
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(1);
  });

  it('replays the first answer even after the order moved on', async () => {
    const placed = await placeOrder(storeId);
    const k = idemKey();
    const first = await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': k });
    await api.post(statusPath(placed.reference), { status: 'shipped' }, { 'Idempotency-Key': idemKey() });
    const again = await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': k });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.body.data.status).toBe('processing');
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(2);
  });

  it('replays a 409 invalid_transition byte for byte, even once the move has become allowed', async () => {
    const placed = await placeOrder(storeId);
    const k = idemKey();
    const first = await api.post(statusPath(placed.reference), { status: 'shipped' }, { 'Idempotency-Key': k });
    expect(first.status).toBe(409);
    expect(first.body.code).toBe('invalid_transition');
    await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
    const again = await api.post(statusPath(placed.reference), { status: 'shipped' }, { 'Idempotency-Key': k });
    expect(again.status).toBe(409);
    expect(again.text).toBe(first.text);
    const listed = await api.get(`/orders?cursor=${placed.id - 1}&limit=1`);
    expect(listed.body.data[0].status).toBe('processing');
  });

  it('replays a 404 even after an order with that reference was placed', async () => {
    const reference = `LATE-${Date.now()}`;
    const k = idemKey();
    const first = await api.post(statusPath(reference), { status: 'processing' }, { 'Idempotency-Key': k });
    expect(first.status).toBe(404);
    await placeOrder(storeId, { reference });
    const again = await api.post(statusPath(reference), { status: 'processing' }, { 'Idempotency-Key': k });
    expect(again.status).toBe(404);
    expect(again.text).toBe(first.text);
  });

  it('replays a 422 (paid refused, invalid body) byte for byte', async () => {
    const placed = await placeOrder(storeId);
    for (const body of [{ status: 'paid' }, { status: 'nope' }, { status: 'processing', extra: 1 }]) {
      const k = idemKey();
      const first = await api.post(statusPath(placed.reference), body, { 'Idempotency-Key': k });
      expect(first.status).toBe(422);
      const again = await api.post(statusPath(placed.reference), body, { 'Idempotency-Key': k });
      expect(again.status).toBe(422);
      expect(again.text).toBe(first.text);
      expect([first.headers.get('idempotent-replayed'), again.headers.get('idempotent-replayed')]).toEqual([
        null,
        'true',
      ]);
    }
  });

  it('replays a no-op byte for byte', async () => {
    const placed = await placeOrder(storeId);
    const k = idemKey();
    const first = await api.post(statusPath(placed.reference), { status: 'pending' }, { 'Idempotency-Key': k });
    const again = await api.post(statusPath(placed.reference), { status: 'pending' }, { 'Idempotency-Key': k });
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.text).toBe(first.text);
  });

  it('answers 422 idempotency_key_reused to the same key with another body, and changes nothing', async () => {
    const placed = await placeOrder(storeId);
    const k = idemKey();
    await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': k });
    for (const body of [{ status: 'cancelled' }, { status: 'paid' }, {}]) {
      const res = await api.post(statusPath(placed.reference), body, { 'Idempotency-Key': k });
      expect(res.status).toBe(422);
      expectErrorShape(res.body);
      expect(res.body).toMatchObject({ code: 'idempotency_key_reused', field: 'Idempotency-Key' });
    }
    const listed = await api.get(`/orders?cursor=${placed.id - 1}&limit=1`);
    expect(listed.body.data[0].status).toBe('processing');
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(1);
  });

  it('scopes a key to the path and to the API key', async () => {
    const a = await placeOrder(storeId);
    const b = await placeOrder(storeId);
    const k = idemKey();
    expect((await api.post(statusPath(a.reference), { status: 'processing' }, { 'Idempotency-Key': k })).status).toBe(
      200,
    );
    expect(
      (await api.post(statusPath(b.reference), { status: 'cancelled' }, { 'Idempotency-Key': k })).body.data.status,
    ).toBe('cancelled');
    const otherKey = client((await createKey(storeId, ['orders:write-status'])).token);
    const res = await otherKey.post(statusPath(a.reference), { status: 'cancelled' }, { 'Idempotency-Key': k });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('cancelled');
  });

  it('keeps the record 24 hours (TTL attribute in epoch seconds)', async () => {
    const placed = await placeOrder(storeId);
    const k = idemKey();
    await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': k });
    const out = await db().send(
      new GetCommand({
        TableName: tableName(),
        Key: idempotencyRecordKey(scopeOf(key, placed.reference, k)),
        ConsistentRead: true,
      }),
    );
    expect(out.Item).toMatchObject({ type: 'idempotency', state: 'completed', response_status: 200 });
    const inADay = Math.floor(Date.now() / 1000) + 24 * 3600;
    expect(out.Item!.ttl).toBeGreaterThan(inADay - 60);
    expect(out.Item!.ttl).toBeLessThanOrEqual(inADay);
  });
});

describe('POST /orders/{reference}/status: records in odd states', () => {
  let storeId: string;
  let api: Api;
  let key: TestKey;
  beforeAll(async () => {
    const s = await storeWithKey(['orders:write-status']);
    storeId = s.storeId;
    api = s.client;
    key = s.key;
  });
  const body = { status: 'processing' };

  it('answers 409 idempotency_in_progress with Retry-After while a request of the previous version holds the key', async () => {
    const placed = await placeOrder(storeId);
    const k = idemKey();
    await putIdempotencyRecord(scopeOf(key, placed.reference, k), requestFingerprint(body));
    const res = await api.post(statusPath(placed.reference), body, { 'Idempotency-Key': k });
    expect(res.status).toBe(409);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'idempotency_in_progress', field: 'Idempotency-Key' });
    expect(res.headers.get('retry-after')).toBe('1');
    // Another body under a held key is still a reuse.
    const other = await api.post(statusPath(placed.reference), { status: 'cancelled' }, { 'Idempotency-Key': k });
    expect(other.body.code).toBe('idempotency_key_reused');
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(0);
  });
});

describe('POST /orders/{reference}/status: races', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });

  it('ten concurrent requests with the same key: one change; the others get the same answer or 409', async () => {
    const order = await insertTestOrder(storeId, { status: 'pending' });
    const key = await createKey(storeId, ['orders:write-status']);
    const api = client(key.token);
    const k = idemKey();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        api.post(statusPath(order.reference), { status: 'cancelled' }, { 'Idempotency-Key': k }),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    const busy = results.filter((r) => r.status === 409);
    expect(ok.length + busy.length).toBe(10);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    for (const r of busy) {
      expect(r.body.code).toBe('idempotency_in_progress');
      expect(r.headers.get('retry-after')).toBe('1');
    }
    expect(await eventsOfOrder(storeId, order.id)).toHaveLength(1);
    const later = await api.post(statusPath(order.reference), { status: 'cancelled' }, { 'Idempotency-Key': k });
    expect(later.text).toBe(ok[0]!.text);
  });

  it('a retry loop with the same key converges on one change (client honouring Retry-After)', async () => {
    const order = await insertTestOrder(storeId, { status: 'shipped' });
    const key = await createKey(storeId, ['orders:write-status']);
    const api = client(key.token);
    const k = idemKey();
    const attempt = async () => {
      for (let i = 0; i < 10; i++) {
        const r = await api.post(statusPath(order.reference), { status: 'delivered' }, { 'Idempotency-Key': k });
        if (r.status !== 409) return r;
        await new Promise((res) => setTimeout(res, 50));
      }
      throw new Error('still in progress');
    };
    const results = await Promise.all(Array.from({ length: 5 }, attempt));
    expect(new Set(results.map((r) => `${r.status} ${r.text}`)).size).toBe(1);
    expect(results[0]!.status).toBe(200);
    expect(await eventsOfOrder(storeId, order.id)).toHaveLength(1);
  });
});

// Keeps `baseUrl` referenced for readers looking for where requests go.
void baseUrl;
