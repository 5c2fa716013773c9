import { describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { storeWithKey } from '#fixtures/api.ts';
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

/**
 * How the window counts (concurrent requests, the ring's seconds, the earlier limiter's slots, keys
 * apart, a rotated token) is the authorizer's use case's, tested in-process in
 * test/usecase/authenticate.test.ts; here, how the limit is answered.
 */
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

  it('puts the RateLimit headers on error responses too', async () => {
    const { client: api } = await storeWithKey(['catalog:read']);
    const res = await api.get('/products/999999');
    expect(res.status).toBe(404);
    expect(res.headers.get('ratelimit-limit')).toBe('60');
    expect(res.headers.get('ratelimit-remaining')).toBe('59');
  });
});
