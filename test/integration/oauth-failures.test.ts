import { describe, expect, it } from 'vitest';
import { handler } from '#functions/oauth/handler.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';

/**
 * The OAuth handler's failures as RFC 6749 errors (docs/oauth.md#failures), in-process: a failure
 * the function used to throw, which API Gateway answers 502. The store stopped is in
 * test/faults/oauth-store-stopped.test.ts.
 */
const oauthEvent = (resource: string, over: Record<string, unknown>) =>
  gatewayEvent({ resource, path: resource, httpMethod: 'POST', ...over }, { identity: { sourceIp: '192.0.2.1' } });

describe('OAuth failures as RFC 6749 errors', () => {
  it('answers a token request over 1 MiB 413 with an RFC 6749 body, not a thrown error', async () => {
    const res = await handler(
      oauthEvent('/oauth/token', {
        body: `grant_type=refresh_token&refresh_token=${'a'.repeat(1024 * 1024)}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      {} as never,
    );
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });
});
