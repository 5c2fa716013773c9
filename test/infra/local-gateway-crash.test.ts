import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway } from '#emulation/local/gateway.ts';
import { functionFailed, GATEWAY_RESPONSES } from '#http/gateway-responses.ts';

/**
 * What the local gateway (`npm start`) answers when a function crashes: API Gateway's
 * INTEGRATION_FAILURE, as the deployed stack's template and the rehearsal's gateway answer it
 * (test/infra/gateway-responses.test.ts). The OAuth function stands in for any: it runs without
 * the authorizer, so the crash needs no key and no store. Replaced in this file only, by a
 * handler that throws, or one that returns no proxy response (`undefined`).
 */
const crash = vi.hoisted(() => ({ how: 'throws' as 'throws' | 'no-answer' }));
vi.mock('#functions/oauth/handler.ts', () => ({
  handler: async () => {
    if (crash.how === 'throws') throw new Error('the function crashed');
    return undefined;
  },
}));

describe('the local gateway, when a function crashes', () => {
  const server = createGateway();
  let base: string;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const token = async () => {
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=refresh_token&refresh_token=r',
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      requestId: res.headers.get('x-request-id'),
      body: await res.json(),
    };
  };

  /** The answer, and what the gateway wrote to stderr meanwhile (kept out of the test's output). */
  const crashed = async (how: typeof crash.how) => {
    crash.how = how;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      return { answer: await token(), stderr: stderr.mock.calls.map(([line]) => String(line)).join('') };
    } finally {
      stderr.mockRestore();
    }
  };

  it('answers a function that threw 502 bad_gateway with Retry-After, as API Gateway does', async () => {
    const { answer, stderr } = await crashed('throws');
    expect(answer).toEqual({
      status: 502,
      retryAfter: '1',
      requestId: expect.any(String),
      body: functionFailed().body,
    });
    expect(stderr).toContain('the function crashed');
  });

  it('answers a function that returned no proxy response 502, as the rehearsal renders it, not a 500 of its own', async () => {
    const { answer, stderr } = await crashed('no-answer');
    expect(answer).toEqual({
      status: 502,
      retryAfter: null,
      requestId: expect.any(String),
      body: GATEWAY_RESPONSES.internal,
    });
    expect(stderr).toContain('malformed Lambda proxy response');
  });
});
