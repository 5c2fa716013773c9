import { describe, expect, it } from 'vitest';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { adminCommand, client, storeWithKey } from '#fixtures/api.ts';
import { db, tableName } from '#db/client.ts';
import { keys } from '#db/keys.ts';
import { hashToken } from '#domain/key/api-key.ts';
import {
  BUCKET_HEAD_ATTRIBUTE,
  bucketAttribute,
  HEAD_ATTRIBUTE,
  HEAD_COUNT_ATTRIBUTE,
  isRateAttribute,
  PREVIOUS_COUNT_ATTRIBUTE,
  ringOf,
  secondOf,
} from '#domain/key/rate-limit.ts';
import { itemSize } from '../../bench/billing-units.ts';

const tokenItem = async (token: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hashToken(token)), ConsistentRead: true })))
    .Item ?? {};

describe('rate limit (60 requests per key per rolling minute)', () => {
  it('serves 60 requests, refuses the 61st with 429 and Retry-After, and counts down RateLimit-Remaining', async () => {
    const { client: api } = await storeWithKey(['catalog:read']);
    const remaining: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await api.get('/products?limit=1');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('60');
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => 59 - i));
    const refused = await api.get('/products?limit=1');
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: 'rate_limited', message: expect.stringContaining('60'), field: null });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // A request counts until the end of its second 60 s on: at most 61 s.
    expect(retryAfter).toBeLessThanOrEqual(61);
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('ratelimit-reset'))).toBe(retryAfter);
  });

  it('admits exactly 60 of 75 concurrent requests of one key (the window is a conditional write)', async () => {
    const { client: api } = await storeWithKey(['catalog:read']);
    const answers = await Promise.all(Array.from({ length: 75 }, () => api.get('/products?limit=1')));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    // Each admitted request counts the ones committed before it: 59 down to 0, each once.
    const remaining = answers.filter((r) => r.status === 200).map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
  });

  it('keeps the allowance in five attributes: the token item of a key at its limit stays under 1 KB', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    await Promise.all(Array.from({ length: 60 }, () => api.get('/products?limit=1')));
    const item = await tokenItem(key.token);
    const ring = Object.keys(item).filter(isRateAttribute);
    expect(ring.length).toBeGreaterThanOrEqual(2);
    expect(ring.length).toBeLessThanOrEqual(5);
    expect([...ringOf(item).counts.values()].reduce((sum, n) => sum + n, 0)).toBe(60);
    expect(itemSize(item)).toBeLessThan(1024);
  });

  /** Sets attributes of `token`'s item as a test's starting point. */
  const setTokenAttributes = (token: string, attributes: Record<string, number>) =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token(hashToken(token)),
        UpdateExpression: `SET ${Object.keys(attributes)
          .map((_, i) => `#a${i} = :v${i}`)
          .join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(Object.keys(attributes).map((name, i) => [`#a${i}`, name])),
        ExpressionAttributeValues: Object.fromEntries(Object.values(attributes).map((value, i) => [`:v${i}`, value])),
      }),
    );

  /** 30 parallel requests against a key whose window already holds 40: exactly 20 get in, each seeing those before it. */
  async function twentyOfThirty(api: ReturnType<typeof client>) {
    const answers = await Promise.all(Array.from({ length: 30 }, () => api.get('/products?limit=1')));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(20);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(10);
    const remaining = answers.filter((r) => r.status === 200).map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  }

  it('moves the ring to a new second once under 30 parallel requests, and still admits exactly what the window leaves', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    // 40 requests five seconds ago: every parallel request below first tries to move the head.
    const past = secondOf(Date.now()) - 5;
    await setTokenAttributes(key.token, { [HEAD_ATTRIBUTE]: past, [HEAD_COUNT_ATTRIBUTE]: 40 });
    await twentyOfThirty(api);
    const item = await tokenItem(key.token);
    expect(item[HEAD_ATTRIBUTE]).toBeGreaterThan(past);
    // The old head's count, copied by the move (or packed by a later one if a second turned meanwhile).
    expect(ringOf(item).counts.get(past)).toBe(40);
  });

  it('converts a ring of the earlier per-second form under 30 parallel requests: its counts kept, its attributes removed', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    const past = secondOf(Date.now()) - 5;
    await setTokenAttributes(key.token, {
      [BUCKET_HEAD_ATTRIBUTE]: past,
      [bucketAttribute(past)]: 30,
      [bucketAttribute(past - 20)]: 10,
    });
    await twentyOfThirty(api);
    const item = await tokenItem(key.token);
    expect(Object.keys(item).filter((k) => k === BUCKET_HEAD_ATTRIBUTE || /^rc.$/.test(k))).toEqual([]);
    const counts = ringOf(item).counts;
    expect([counts.get(past), counts.get(past - 20)]).toEqual([30, 10]);
  });

  it("converts the per-second form within its head second: the head's count carries on", async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    // A head half a minute ahead of this clock (another container's): every request counts in it.
    const ahead = secondOf(Date.now()) + 30;
    await setTokenAttributes(key.token, { [BUCKET_HEAD_ATTRIBUTE]: ahead, [bucketAttribute(ahead)]: 40 });
    await twentyOfThirty(api);
    const item = await tokenItem(key.token);
    expect(item[BUCKET_HEAD_ATTRIBUTE]).toBeUndefined();
    expect(item[bucketAttribute(ahead)]).toBeUndefined();
    expect([item[HEAD_ATTRIBUTE], item[HEAD_COUNT_ATTRIBUTE], item[PREVIOUS_COUNT_ATTRIBUTE]]).toEqual([
      ahead,
      60,
      undefined,
    ]);
  });

  it('counts the slots the earlier limiter stored (live ones count, old ones do not), then removes them', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    const now = Date.now();
    // 59 requests a second ago and one 61 s ago, as millisecond epochs (its first form).
    const legacy = Object.fromEntries(
      Array.from({ length: 60 }, (_, i) => [`:v${i}`, i === 0 ? now - 61_000 : now - 1_000]),
    );
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token(hashToken(key.token)),
        UpdateExpression: `SET ${Array.from({ length: 60 }, (_, i) => `rl${i} = :v${i}`).join(', ')}`,
        ExpressionAttributeValues: legacy,
      }),
    );
    const admitted = await api.get('/products?limit=1');
    expect(admitted.status).toBe(200);
    expect(admitted.headers.get('ratelimit-remaining')).toBe('0');
    const item = await tokenItem(key.token);
    expect(Object.keys(item).filter((k) => /^rl\d+$/.test(k))).toEqual([]);
    expect(item[HEAD_ATTRIBUTE]).toBeGreaterThanOrEqual(secondOf(now));
    expect((await api.get('/products?limit=1')).status).toBe(429);
  });

  it('keeps keys apart: one key at its limit does not slow another key of the same store', async () => {
    const first = await storeWithKey(['catalog:read']);
    await Promise.all(Array.from({ length: 61 }, () => first.client.get('/products?limit=1')));
    expect((await first.client.get('/products')).status).toBe(429);
    const other = await adminCommand<{ token: string }>('keys create', {
      store: first.storeId,
      name: 'second',
      abilities: 'catalog:read',
    });
    expect((await client(other.token).get('/products')).status).toBe(200);
  });

  it('does not reset the allowance by rotating the token', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    await Promise.all(Array.from({ length: 60 }, () => api.get('/products?limit=1')));
    const rotated = await adminCommand<{ token: string }>('keys rotate', { id: key.id });
    expect((await client(rotated.token).get('/products')).status).toBe(429);
  });

  it('puts the RateLimit headers on error responses too', async () => {
    const { client: api } = await storeWithKey(['catalog:read']);
    const res = await api.get('/products/999999');
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit-limit')).toBe('60');
    expect(res.headers.get('ratelimit-remaining')).toBe('59');
  });
});
