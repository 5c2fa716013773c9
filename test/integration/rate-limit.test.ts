import { describe, expect, it } from 'vitest';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { adminCommand, client, storeWithKey } from '#fixtures/api.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import {
  BUCKET_MS,
  bucketAttribute,
  hashToken,
  HEAD_ATTRIBUTE,
  RING_EPOCH_MS,
  RING_SIZE,
  secondOf,
} from '#domain/key/api-key.ts';
import { itemSize } from '../../bench/billing-units.ts';

const tokenItem = async (token: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: keys.token(hashToken(token)), ConsistentRead: true })))
    .Item ?? {};

describe('rate limit (60 requests per key per rolling minute)', () => {
  it('serves 60 requests, refuses the 61st with 429 and Retry-After, and counts down RateLimit-Remaining', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    // 55 of the 60 counted in this second, as the limiter stores them (its head and that second's
    // count), then 5 sent one after another: the test needs six requests answered within the
    // minute those 55 stay counted, not 61 (one after another they took 97 s at load 50; at once,
    // one key's writes take turns on its count). 60 real requests admitted at once: the next test.
    const seeded = secondOf(Date.now());
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token(hashToken(key.token)),
        UpdateExpression: 'SET #h = :s, #b = :n',
        ExpressionAttributeNames: { '#h': HEAD_ATTRIBUTE, '#b': bucketAttribute(seeded) },
        ExpressionAttributeValues: { ':s': seeded, ':n': 55 },
      }),
    );
    const remaining: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.get('/products?limit=1');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('60');
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const sent = Date.now();
    const refused = await api.get('/products?limit=1');
    const answered = Date.now();
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ code: 'rate_limited', message: expect.stringContaining('60'), field: null });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    // A request counts until the end of its second 60 s on: at most 61 s.
    expect(retryAfter).toBeLessThanOrEqual(61);
    // Exactly when the oldest of the 60 (the seeded second) leaves the window, as of the moment the
    // stack decided, which lies between sending and answer: a bound from the server's window, not a pace.
    const freed = RING_EPOCH_MS + (seeded + RING_SIZE) * BUCKET_MS;
    const untilFreed = (at: number) => Math.max(1, Math.ceil((freed - at) / 1000));
    expect(retryAfter).toBeGreaterThanOrEqual(untilFreed(answered));
    expect(retryAfter).toBeLessThanOrEqual(untilFreed(sent));
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

  it('keeps the allowance in at most 61 per-second counts: the token item of a key at its limit stays under 1 KB', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    await Promise.all(Array.from({ length: 60 }, () => api.get('/products?limit=1')));
    const item = await tokenItem(key.token);
    const counts = Object.entries(item).filter(([k]) => /^rc.$/.test(k));
    expect(counts.length).toBeGreaterThanOrEqual(1);
    expect(counts.length).toBeLessThanOrEqual(RING_SIZE);
    expect(counts.reduce((sum, [, n]) => sum + (n as number), 0)).toBe(60);
    expect(Object.keys(item).filter((k) => /^rl\d+$/.test(k))).toEqual([]);
    expect(itemSize(item)).toBeLessThan(1024);
  });

  it('moves the ring to a new second once under 30 parallel requests, and still admits exactly what the window leaves', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    // 40 requests five seconds ago: every parallel request below first tries to move the head.
    const past = secondOf(Date.now()) - 5;
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.token(hashToken(key.token)),
        UpdateExpression: 'SET #h = :past, #b = :forty',
        ExpressionAttributeNames: { '#h': HEAD_ATTRIBUTE, '#b': bucketAttribute(past) },
        ExpressionAttributeValues: { ':past': past, ':forty': 40 },
      }),
    );
    const answers = await Promise.all(Array.from({ length: 30 }, () => api.get('/products?limit=1')));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(20);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(10);
    const remaining = answers.filter((r) => r.status === 200).map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    const item = await tokenItem(key.token);
    expect(item[HEAD_ATTRIBUTE]).toBeGreaterThan(past);
    expect(item[bucketAttribute(past)]).toBe(40);
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
