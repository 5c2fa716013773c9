import { describe, expect, it } from 'vitest';
import { OneTime } from '#bin/console/once.ts';

type Shown = { secret: string; key: number };
const make = () => {
  let now = 0;
  const once = new OneTime<string, Shown, { key: number }>(
    ({ key }) => ({ key }),
    () => now,
  );
  return { once, later: (ms: number) => (now += ms) };
};

describe('console one-time form tokens and shown-once slots', () => {
  it('runs a form token once and gives every later submit the first answer', async () => {
    const { once } = make();
    const token = once.issue();
    let runs = 0;
    const action = async () => `answer ${++runs}`;
    const [a, b] = await Promise.all([once.once(token, action), once.once(token, action)]);
    expect([a, b, await once.once(token, action)]).toEqual(['answer 1', 'answer 1', 'answer 1']);
    expect(runs).toBe(1);
  });

  it('runs nothing for a token it did not issue, or issued more than an hour ago', () => {
    const { once, later } = make();
    const token = once.issue();
    expect(once.once('guessed', async () => 'x')).toBeUndefined();
    later(60 * 60 * 1000);
    expect(once.once(token, async () => 'x')).toBeUndefined();
  });

  it('shows a slot to one read; later reads get only what it belonged to, and it expires', () => {
    const { once, later } = make();
    const id = once.put({ secret: 's3cret', key: 7 });
    expect(id).toMatch(/^[\w-]{24}$/);
    expect(once.take(id)).toEqual({ kind: 'shown', shown: { secret: 's3cret', key: 7 } });
    expect(once.take(id)).toEqual({ kind: 'gone', gone: { key: 7 } });
    expect(once.take('other')).toEqual({ kind: 'unknown' });
    const unread = once.put({ secret: 'late', key: 8 });
    later(10 * 60 * 1000);
    expect(once.take(unread)).toEqual({ kind: 'unknown' });
  });
});
