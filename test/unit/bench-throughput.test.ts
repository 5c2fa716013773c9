import { describe, expect, it } from 'vitest';
import { saturate, served } from '../../bench/saturate.ts';

describe("the bench's throughput counting (bench/saturate.ts)", () => {
  it('counts only the successful answers: a refusal is not throughput', () => {
    expect(served('reads', { done: 1000, failed: 10, seconds: 5 })).toEqual({ served: 990, perSecond: 198 });
  });

  it('fails the section when more than 1% of its requests fail', () => {
    // Keys at their rate limit: most requests answered 429, fast.
    expect(() => served('reads', { done: 6670, failed: 6300, seconds: 5 })).toThrow(
      /reads: 6300 of 6670 requests failed \(more than 1%\)/,
    );
    expect(() => served('reads', { done: 1000, failed: 11, seconds: 5 })).toThrow(/11 of 1000 requests failed/);
    expect(() => served('reads', { done: 0, failed: 0, seconds: 5 })).toThrow(/no request completed/);
  });

  it('saturate: a run whose calls are refused fails instead of reporting their rate', async () => {
    await expect(saturate(async (i) => i % 10 === 0, 0.2)).rejects.toThrow(/requests failed \(more than 1%\)/);
    const run = await saturate(async () => true, 0.2);
    expect(run.failed).toBe(0);
    expect(run.perSecond).toBeGreaterThan(0);
  });
});
