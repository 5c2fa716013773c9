import { describe, expect, it } from 'vitest';
import { authenticateToken, newKey, newStore, rotateKey, setOnTokenItem, tokenItem } from '#fixtures/usecase.ts';
import { bucketAttribute, HEAD_ATTRIBUTE, RING_SIZE, secondOf } from '#domain/key/api-key.ts';
import { itemSize } from '../../bench/billing-units.ts';

/**
 * The authorizer's use case (shared/app/authenticate.ts) called in-process: each request of a key
 * takes its place in the key's window (60 a rolling minute here) with one conditional write on
 * the token item, so concurrent requests are counted exactly. How a refusal is answered (429,
 * Retry-After, the RateLimit headers) is test/integration/rate-limit.test.ts's.
 */
async function reader() {
  const storeId = await newStore();
  return { storeId, ...(await newKey(storeId, ['catalog:read'])) };
}

/** `n` requests of one token at once: the admitted ones' RateLimit-Remaining, and how many were refused. */
async function burst(token: string, n: number) {
  const results = await Promise.all(Array.from({ length: n }, () => authenticateToken(token)));
  const remaining: number[] = [];
  let refused = 0;
  for (const r of results) {
    if (!r.ok) throw new Error('a live key was not recognised');
    if (r.rate.allowed) remaining.push(r.rate.remaining);
    else refused++;
  }
  return { remaining: remaining.sort((a, b) => a - b), refused };
}

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('authenticateToken: the rate limit', () => {
  it('admits exactly 60 of 75 concurrent requests of one key (the window is a conditional write)', async () => {
    const { token } = await reader();
    const { remaining, refused } = await burst(token, 75);
    // Each admitted request counts the ones committed before it: 59 down to 0, each once.
    expect(remaining).toEqual(upTo(60));
    expect(refused).toBe(15);
  });

  it('keeps the allowance in at most 61 per-second counts: the token item of a key at its limit stays under 1 KB', async () => {
    const { token } = await reader();
    expect((await burst(token, 60)).remaining).toHaveLength(60);
    const item = await tokenItem(token);
    const counts = Object.entries(item).filter(([k]) => /^rc.$/.test(k));
    expect(counts.length).toBeGreaterThanOrEqual(1);
    expect(counts.length).toBeLessThanOrEqual(RING_SIZE);
    expect(counts.reduce((sum, [, n]) => sum + (n as number), 0)).toBe(60);
    expect(Object.keys(item).filter((k) => /^rl\d+$/.test(k))).toEqual([]);
    expect(itemSize(item)).toBeLessThan(1024);
  });

  it('moves the ring to a new second once under 30 parallel requests, and still admits exactly what the window leaves', async () => {
    const { token } = await reader();
    // 40 requests five seconds ago: every parallel request below first tries to move the head.
    const past = secondOf(Date.now()) - 5;
    await setOnTokenItem(token, { [HEAD_ATTRIBUTE]: past, [bucketAttribute(past)]: 40 });
    const { remaining, refused } = await burst(token, 30);
    expect(remaining).toEqual(upTo(20));
    expect(refused).toBe(10);
    const item = await tokenItem(token);
    expect(item[HEAD_ATTRIBUTE]).toBeGreaterThan(past);
    expect(item[bucketAttribute(past)]).toBe(40);
  });

  it('counts the slots the earlier limiter stored (live ones count, old ones do not), then removes them', async () => {
    const { token } = await reader();
    const now = Date.now();
    // 59 requests a second ago and one 61 s ago, as millisecond epochs (its first form).
    await setOnTokenItem(
      token,
      Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`rl${i}`, i === 0 ? now - 61_000 : now - 1_000])),
    );
    expect(await authenticateToken(token)).toMatchObject({ ok: true, rate: { allowed: true, remaining: 0 } });
    const item = await tokenItem(token);
    expect(Object.keys(item).filter((k) => /^rl\d+$/.test(k))).toEqual([]);
    expect(item[HEAD_ATTRIBUTE]).toBeGreaterThanOrEqual(secondOf(now));
    expect(await authenticateToken(token)).toMatchObject({ ok: true, rate: { allowed: false } });
  });

  it('keeps keys apart: one key at its limit leaves another key of the same store its own allowance', async () => {
    const { storeId, token } = await reader();
    expect((await burst(token, 61)).refused).toBe(1);
    expect(await authenticateToken(token)).toMatchObject({ ok: true, rate: { allowed: false } });
    const other = await newKey(storeId, ['catalog:read']);
    expect(await authenticateToken(other.token)).toMatchObject({ ok: true, rate: { allowed: true, remaining: 59 } });
  });

  it('takes no place for a request the key will not be served (an ability it lacks) nor for an uncounted one (MCP)', async () => {
    const { token } = await reader();
    const first = await authenticateToken(token);
    if (!first.ok) throw new Error('a live key was not recognised');
    expect(await authenticateToken(token, { ability: 'catalog:write', counted: true })).toMatchObject({ ok: true });
    expect(await authenticateToken(token, { ability: null, counted: false })).toMatchObject({ ok: true });
    // The next request served is the second to take a place.
    expect(await authenticateToken(token, { ability: 'catalog:read', counted: true })).toMatchObject({
      ok: true,
      rate: { allowed: true, remaining: first.rate.remaining - 1 },
    });
  });

  it('does not reset the allowance by rotating the token', async () => {
    const { caller, token } = await reader();
    expect((await burst(token, 60)).remaining).toHaveLength(60);
    const rotated = await rotateKey(caller.keyId);
    expect(await authenticateToken(rotated.token)).toMatchObject({ ok: true, rate: { allowed: false } });
  });
});
