import { describe, expect, it } from 'vitest';
import { db } from '#db/core/client.ts';

describe('the DynamoDB client', () => {
  it('counts round trips and leaves out the SDK logger middleware, whose sensitive-data filter walks every item read for a logger that logs nothing', () => {
    const middlewares = (db() as unknown as { middlewareStack: { identify(): string[] } }).middlewareStack.identify();
    expect(middlewares.some((m) => m.startsWith('countRoundTrips'))).toBe(true);
    expect(middlewares.filter((m) => /logger/i.test(m))).toEqual([]);
  });
});
