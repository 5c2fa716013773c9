import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { eventsOfOrder, idemKey, insertTestOrder, outboxEvents, placeOrder, statusPath } from '#fixtures/orders.ts';
import { ORDER_STATUSES } from '#domain/order/order.ts';
import { orderEventId } from '#domain/order/events.ts';
import { waitFor } from '#fixtures/webhooks.ts';

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/**
 * Every cell of the state machine (which moves are allowed, which are no-ops) is the use case's,
 * tested in-process in test/usecase/orders.test.ts; here, how each kind of outcome is answered.
 */
describe('POST /orders/{reference}/status: the state machine', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });

  it('refuses a move the state machine forbids with 409 invalid_transition naming the status, and changes nothing', async () => {
    const api = client((await createKey(storeId, ['orders:write-status'])).token);
    const order = await insertTestOrder(storeId, { status: 'cancelled' });
    const res = await api.post(statusPath(order.reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
    expect(res.status).toBe(409);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'invalid_transition', field: 'status' });
    expect(res.body.message).toContain('cancelled');
    expect(await eventsOfOrder(storeId, order.id)).toHaveLength(0);
  });

  // One key per starting status keeps each batch of requests well inside the rate limit.
  describe.each(ORDER_STATUSES)('from %s', (from) => {
    let api: ReturnType<typeof client>;
    beforeAll(async () => {
      api = client((await createKey(storeId, ['orders:write-status'])).token);
    });

    it('refuses paid with 422 status_not_allowed and changes nothing', async () => {
      const order = await insertTestOrder(storeId, { status: from });
      const res = await api.post(statusPath(order.reference), { status: 'paid' }, { 'Idempotency-Key': idemKey() });
      expect(res.status).toBe(422);
      expectErrorShape(res.body);
      expect(res.body).toMatchObject({ code: 'status_not_allowed', field: 'status' });
      expect(await eventsOfOrder(storeId, order.id)).toHaveLength(0);
    });
  });
});

describe('POST /orders/{reference}/status: response, event and rules', () => {
  let storeId: string;
  let keyId: number;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    const s = await storeWithKey(['orders:read', 'orders:write-status']);
    storeId = s.storeId;
    keyId = s.key.id;
    api = s.client;
  });

  it('returns the updated order and writes one order.status_changed event in the agreed format', async () => {
    const placed = await placeOrder(storeId, { status: 'paid' });
    const before = Date.now();
    const res = await api.post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(Object.keys(res.body)).toEqual(['data']);
    const order = res.body.data;
    expect(order).toEqual({ ...placed, status: 'processing', updated_at: expect.stringMatching(ISO_MS) });
    expect(order.paid_total).toBe(placed.total);

    // Read once the stream consumer has numbered it (after the commit, off the request path), so
    // the item is the same however late a busy machine lets the numbering run.
    const event = await waitFor(
      'the event numbered',
      async () => {
        const found = (await outboxEvents(storeId)).find((e) => e.payload.data.order.id === placed.id);
        return typeof found?.sequence === 'number' ? found : undefined;
      },
      120_000,
      100,
    );
    expect(event).toEqual({
      pk: `STORE#${storeId}`,
      sk: `EVENT#${event.event_id}`,
      type: 'outbox',
      // Named by the order's version, and naming the version it followed (the express lane's order).
      event_id: orderEventId({ store_id: storeId, id: order.id, updated_at: order.updated_at }),
      follows: orderEventId({ store_id: storeId, id: placed.id, updated_at: placed.updated_at }),
      event_type: 'order.status_changed',
      store_id: storeId,
      created_at: order.updated_at,
      ttl: expect.any(Number),
      origin: { kind: 'key', key_id: keyId },
      sequence: expect.any(Number),
      payload: {
        type: 'order.status_changed',
        timestamp: order.updated_at,
        changed_fields: ['status'],
        data: { order, previous_status: 'paid', status: 'processing' },
      },
    });
    // Kept as long as GET /events serves it (docs/webhooks.md#how-to-never-miss-an-event).
    const thirtyDays = 30 * 24 * 3600;
    expect(event.ttl).toBeGreaterThanOrEqual(Math.floor(before / 1000) + thirtyDays - 1);
    expect(event.ttl).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + thirtyDays + 1);
  });

  it('never changes paid_total, through a whole life cycle', async () => {
    const placed = await placeOrder(storeId, { status: 'paid', paid_total: 1234 });
    for (const status of ['processing', 'shipped', 'delivered', 'returned']) {
      const res = await api.post(statusPath(placed.reference), { status }, { 'Idempotency-Key': idemKey() });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status, paid_total: 1234, total: placed.total });
    }
    const listed = await api.get(`/orders?cursor=${placed.id - 1}&limit=1`);
    expect(listed.body.data[0]).toMatchObject({ status: 'returned', paid_total: 1234 });
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(4);
  });

  it('treats the current status as a 200 no-op: no event, updated_at unchanged', async () => {
    const placed = await placeOrder(storeId);
    const res = await api.post(statusPath(placed.reference), { status: 'pending' }, { 'Idempotency-Key': idemKey() });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(placed);
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(0);
  });

  it('moves the order into updated_since results', async () => {
    const placed = await placeOrder(storeId);
    const since = new Date(Date.now() + 1).toISOString();
    await new Promise((r) => setTimeout(r, 5));
    const res = await api.post(statusPath(placed.reference), { status: 'cancelled' }, { 'Idempotency-Key': idemKey() });
    const listed = await api.get(`/orders?updated_since=${encodeURIComponent(since)}`);
    expect(listed.body.data).toEqual([res.body.data]);
  });

  it.each([
    [{}, 'status', 'validation_failed'],
    [{ status: 'bogus' }, 'status', 'validation_failed'],
    [{ status: 'PROCESSING' }, 'status', 'validation_failed'],
    [{ status: 3 }, 'status', 'validation_failed'],
    [{ status: null }, 'status', 'validation_failed'],
    [{ status: 'processing', note: 'x' }, 'note', 'validation_failed'],
    [{ status: 'paid' }, 'status', 'status_not_allowed'],
  ])('refuses the body %j with 422 (%s)', async (body, field, code) => {
    const placed = await placeOrder(storeId);
    const res = await api.post(statusPath(placed.reference), body, { 'Idempotency-Key': idemKey() });
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code, field });
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(0);
  });

  it('refuses a missing body with 422 on status, and a non-JSON body with 400', async () => {
    const placed = await placeOrder(storeId);
    const empty = await api.post(statusPath(placed.reference), undefined, { 'Idempotency-Key': idemKey() });
    expect(empty.status).toBe(422);
    expect(empty.body).toMatchObject({ code: 'validation_failed', field: 'status' });
    const broken = await api.post(statusPath(placed.reference), '{"status":', { 'Idempotency-Key': idemKey() });
    expect(broken.status).toBe(400);
    expect(broken.body.code).toBe('invalid_json');
  });

  it('answers 404 for an unknown or malformed reference', async () => {
    for (const reference of ['NOPE-404', 'a b', 'x'.repeat(129), 'ünï']) {
      const res = await api.post(statusPath(reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
      expect(res.status, reference).toBe(404);
      expectErrorShape(res.body);
      expect(res.body.code).toBe('not_found');
    }
  });

  it("cannot reach another store's order", async () => {
    const other = await storeWithKey(['orders:write-status']);
    const placed = await placeOrder(storeId);
    const res = await other.client.post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(res.status).toBe(404);
  });

  it('answers 401 without a valid key', async () => {
    const res = await client(null).post(statusPath('X'), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
    expect(res.status).toBe(401);
    expectErrorShape(res.body);
    expect(
      (await client('wrong').post(statusPath('X'), { status: 'processing' }, { 'Idempotency-Key': idemKey() })).status,
    ).toBe(401);
  });

  it('answers 403 naming orders:write-status to a key that only reads orders, and changes nothing', async () => {
    const reader = await createKey(storeId, ['orders:read']);
    const placed = await placeOrder(storeId);
    const res = await client(reader.token).post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(res.status).toBe(403);
    expectErrorShape(res.body);
    expect(res.body.code).toBe('forbidden');
    expect(res.body.message).toContain('orders:write-status');
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(0);
  });

  it('lets a key with orders:write-status alone change a status', async () => {
    const writer = await createKey(storeId, ['orders:write-status']);
    const placed = await placeOrder(storeId);
    const res = await client(writer.token).post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(res.status).toBe(200);
  });
});

describe('POST /orders/{reference}/status: the Idempotency-Key header', () => {
  let storeId: string;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    const s = await storeWithKey(['orders:write-status']);
    storeId = s.storeId;
    api = s.client;
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['an empty quoted string', '""'],
  ])('answers 400 idempotency_key_required when it is %s', async (_, value) => {
    const placed = await placeOrder(storeId);
    const res = await api.post(
      statusPath(placed.reference),
      { status: 'processing' },
      value === undefined ? {} : { 'Idempotency-Key': value },
    );
    expect(res.status).toBe(400);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'idempotency_key_required', field: 'Idempotency-Key' });
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(0);
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['an unterminated quoted string', '"abc'],
    ['a quoted string with a bad escape', '"a\\bc"'],
    ['a quoted string with trailing text', '"abc"x'],
  ])('answers 422 on Idempotency-Key when it is %s', async (_, value) => {
    const placed = await placeOrder(storeId);
    const res = await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': value });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'validation_failed', field: 'Idempotency-Key' });
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(0);
  });

  it('accepts 255 characters', async () => {
    const placed = await placeOrder(storeId);
    const res = await api.post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': 'k'.repeat(255) },
    );
    expect(res.status).toBe(200);
  });

  it('takes a quoted key (RFC 8941) as the same key as the bare one', async () => {
    const placed = await placeOrder(storeId);
    const bare = idemKey();
    const quoted = await api.post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': `"${bare}"` },
    );
    expect(quoted.status).toBe(200);
    const again = await api.post(statusPath(placed.reference), { status: 'processing' }, { 'Idempotency-Key': bare });
    expect(again.status).toBe(200);
    expect(again.text).toBe(quoted.text);
    // The same key with another body proves it is one record, not two.
    const other = await api.post(statusPath(placed.reference), { status: 'cancelled' }, { 'Idempotency-Key': bare });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(1);
  });

  it('unescapes \\" and \\\\ inside a quoted key', async () => {
    const placed = await placeOrder(storeId);
    const first = await api.post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': '"a\\"b\\\\c"' },
    );
    expect(first.status).toBe(200);
    const bare = await api.post(
      statusPath(placed.reference),
      { status: 'processing' },
      { 'Idempotency-Key': 'a"b\\c' },
    );
    expect(bare.text).toBe(first.text);
    expect(await eventsOfOrder(storeId, placed.id)).toHaveLength(1);
  });
});
