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

  it('answers a body it cannot read, on the token and registration endpoints, whole: 413 for one too large on both', async () => {
    const answer = async (resource: string, body: string, isBase64Encoded: boolean, contentType: string) => {
      const res = await handler(
        oauthEvent(resource, { body, isBase64Encoded, headers: { 'content-type': contentType } }),
        {} as never,
      );
      return { status: res.statusCode, headers: res.headers, body: JSON.parse(res.body) };
    };
    const form = 'application/x-www-form-urlencoded';
    const big = `grant_type=refresh_token&refresh_token=${'a'.repeat(1024 * 1024)}`;
    const notUtf8 = Buffer.from([0x61, 0x3d, 0xff]).toString('base64');
    expect(await answer('/oauth/token', big, false, form)).toMatchInlineSnapshot(`
      {
        "body": {
          "error": "invalid_request",
          "error_description": "The request body is larger than 1048576 bytes.",
        },
        "headers": {
          "Cache-Control": "no-store",
          "Content-Type": "application/json",
        },
        "status": 413,
      }
    `);
    expect(await answer('/oauth/token', notUtf8, true, form)).toMatchInlineSnapshot(`
      {
        "body": {
          "error": "invalid_request",
          "error_description": "The request body is not valid UTF-8.",
        },
        "headers": {
          "Cache-Control": "no-store",
          "Content-Type": "application/json",
        },
        "status": 400,
      }
    `);
    expect(await answer('/oauth/register', big, false, 'application/json')).toMatchInlineSnapshot(`
      {
        "body": {
          "error": "invalid_request",
          "error_description": "The request body is larger than 1048576 bytes.",
        },
        "headers": {
          "Cache-Control": "no-store",
          "Content-Type": "application/json",
        },
        "status": 413,
      }
    `);
    expect(await answer('/oauth/register', notUtf8, true, 'application/json')).toMatchInlineSnapshot(`
      {
        "body": {
          "error": "invalid_client_metadata",
          "error_description": "The request body is not valid UTF-8.",
        },
        "headers": {
          "Content-Type": "application/json",
        },
        "status": 400,
      }
    `);
  });
});
