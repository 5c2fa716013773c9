import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { insertTestOrder, placeOrder } from '#fixtures/orders.ts';

type Api = ReturnType<typeof client>;

const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const hour = (h: number, base = Date.parse('2026-01-01T00:00:00.000Z')) => new Date(base + h * 3_600_000).toISOString();

/**
 * Walks over every page (page sizes, an updated_since filter, orders changing mid-walk, 270 matching
 * orders of 300) are the use case's, tested in-process in test/usecase/orders.test.ts; here, the
 * pages as the route answers them.
 */
describe('GET /orders: cursor pages in ascending id', () => {
  let api: Api;
  let storeId: string;
  let first: Record<string, any>;
  beforeAll(async () => {
    const s = await storeWithKey(['orders:read']);
    api = s.client;
    storeId = s.storeId;
    first = await placeOrder(storeId, { reference: 'FIRST-1' });
    for (let i = 2; i <= 23; i++) await placeOrder(storeId);
  });

  it('returns the first 15 orders and a next_cursor by default', async () => {
    const res = await api.get('/orders');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(Object.keys(res.body)).toEqual(['data', 'next_cursor']);
    expect(res.body.data.map((o: { id: number }) => o.id)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(res.body.next_cursor).toBe(15);
  });

  it('returns the order record of docs/contract.md#orders with computed totals', async () => {
    const res = await api.get('/orders?limit=1');
    expect(res.body.data[0]).toEqual({
      id: 1,
      reference: 'FIRST-1',
      status: 'pending',
      currency_code: 'EUR',
      customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+31000000001' },
      items: [
        { product_id: 1, offer_id: 1, sku: 'CH-1', name: 'Oak Chair', quantity: 2, price: 4900, total: 9800 },
        { product_id: null, offer_id: null, sku: null, name: 'Gift wrap', quantity: 1, price: 250, total: 250 },
      ],
      subtotal: 10050,
      shipping_total: 990,
      discount_total: 500,
      total: 10540,
      paid_total: 0,
      created_at: expect.stringMatching(ISO_MS),
      updated_at: first.updated_at,
    });
  });

  it('continues after the cursor and ends with next_cursor null', async () => {
    const res = await api.get('/orders?cursor=15');
    expect(res.body.data.map((o: { id: number }) => o.id)).toEqual([16, 17, 18, 19, 20, 21, 22, 23]);
    expect(res.body.next_cursor).toBeNull();
  });

  it('gives next_cursor null when a full page is also the last one', async () => {
    const res = await api.get('/orders?limit=23');
    expect(res.body.data).toHaveLength(23);
    expect(res.body.next_cursor).toBeNull();
    const tail = await api.get('/orders?cursor=18&limit=5');
    expect(tail.body.data).toHaveLength(5);
    expect(tail.body.next_cursor).toBeNull();
  });

  it('returns an empty page past the last id, and for a cursor beyond every id', async () => {
    for (const cursor of [23, 1000, 999_999_999_999, 9_007_199_254_740_991]) {
      const res = await api.get(`/orders?cursor=${cursor}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], next_cursor: null });
    }
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=51', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=', 'limit'],
    ['cursor=-1', 'cursor'],
    ['cursor=x', 'cursor'],
    ['cursor=1e3', 'cursor'],
    ['updated_after=2026-01-01T00:00:00Z', 'updated_after'],
  ])('refuses %s with 422 naming the parameter', async (query, field) => {
    const res = await api.get(`/orders?${query}`);
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
  });

  it('accepts the limit bounds 1 and 50', async () => {
    expect((await api.get('/orders?limit=1')).body.data).toHaveLength(1);
    const max = await api.get('/orders?limit=50');
    expect(max.body.data).toHaveLength(23);
    expect(max.body.next_cursor).toBeNull();
  });

  it("shows only the key's own store", async () => {
    const other = await storeWithKey(['orders:read']);
    await placeOrder(other.storeId);
    const res = await other.client.get('/orders');
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].id).toBe(1);
    expect(res.body.data[0].reference).not.toBe('FIRST-1');
  });

  it('returns an empty list for a store without orders', async () => {
    const empty = await storeWithKey(['orders:read']);
    expect((await empty.client.get('/orders')).body).toEqual({ data: [], next_cursor: null });
    expect((await empty.client.get('/orders?updated_since=2000-01-01T00:00:00Z')).body).toEqual({
      data: [],
      next_cursor: null,
    });
  });

  it('answers 401 without a valid key and 403 naming orders:read without the ability', async () => {
    const anonymous = await client(null).get('/orders');
    expect(anonymous.status).toBe(401);
    expectErrorShape(anonymous.body);
    expect((await client('not-a-key').get('/orders')).status).toBe(401);
    const writer = await createKey(storeId, ['orders:write-status', 'catalog:read']);
    const res = await client(writer.token).get('/orders');
    expect(res.status).toBe(403);
    expectErrorShape(res.body);
    expect(res.body.code).toBe('forbidden');
    expect(res.body.message).toContain('orders:read');
  });
});

describe('GET /orders?updated_since', () => {
  let api: Api;
  let storeId: string;
  // Order i (id i) was last updated at hour UPDATED[i-1]: ids and update times in different orders.
  const UPDATED = [5, 12, 1, 20, 9, 14, 3, 18, 10, 7, 16, 11, 2, 19, 13, 6, 17, 4, 15, 8];
  const idsUpdatedFrom = (h: number) => UPDATED.flatMap((u, i) => (u >= h ? [i + 1] : []));
  beforeAll(async () => {
    const s = await storeWithKey(['orders:read', 'orders:write-status']);
    api = s.client;
    storeId = s.storeId;
    for (const h of UPDATED) await insertTestOrder(storeId, { updatedAt: hour(h) });
  });

  it('returns only orders updated at or after the instant, ascending by id', async () => {
    const res = await api.get(`/orders?updated_since=${encodeURIComponent(hour(10))}`);
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: { id: number }) => o.id)).toEqual(idsUpdatedFrom(10));
    expect(res.body.data.every((o: { updated_at: string }) => o.updated_at >= hour(10))).toBe(true);
    expect(res.body.next_cursor).toBeNull();
  });

  it('reads the offset: +02:00 and -05:30 name the same instants as Z', async () => {
    const expected = idsUpdatedFrom(10);
    for (const value of [
      '2026-01-01T12:00:00+02:00',
      '2026-01-01T04:30:00-05:30',
      '2026-01-01T12:00+0200',
      '2026-01-01T10:00:00.000Z',
      '2026-01-01t10:00:00z',
    ]) {
      const res = await api.get(`/orders?updated_since=${encodeURIComponent(value)}&limit=50`);
      expect(res.status, value).toBe(200);
      expect(
        res.body.data.map((o: { id: number }) => o.id),
        value,
      ).toEqual(expected);
    }
  });

  it('takes an unencoded + (which arrives as a space) as the offset sign', async () => {
    const res = await api.get('/orders?updated_since=2026-01-01T12:00:00+02:00&limit=50');
    expect(res.status).toBe(200);
    expect(res.body.data.map((o: { id: number }) => o.id)).toEqual(idsUpdatedFrom(10));
  });

  it('includes an order updated exactly at the instant, and rounds a finer fraction up', async () => {
    const exact = await api.get(`/orders?updated_since=${encodeURIComponent('2026-01-01T20:00:00.000Z')}`);
    expect(exact.body.data.map((o: { id: number }) => o.id)).toEqual([4]);
    const after = await api.get(`/orders?updated_since=${encodeURIComponent('2026-01-01T20:00:00.0001Z')}`);
    expect(after.body.data).toEqual([]);
  });

  it.each([
    '2026-01-01',
    '2026-01-01T10:00:00',
    'yesterday',
    '1735689600',
    '2026-13-01T00:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T10:00:00+25:00',
    '2026-01-01T10:00:00 Z',
    '',
  ])('refuses updated_since=%s with 422', async (value) => {
    const res = await api.get(`/orders?updated_since=${encodeURIComponent(value)}`);
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field: 'updated_since' });
  });
});
