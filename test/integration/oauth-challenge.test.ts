import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as mcp } from '#functions/mcp/handler.ts';
import { adminCommand, baseUrl, createKey, createStore } from '#fixtures/api.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * The one 401 the gateway cannot answer: a key revoked between the authorizer's read and the MCP
 * function's own count of the request (functions/mcp/allowance.ts). The function runs here in
 * this process against the stack's store with the authorizer context the gateway would pass; the
 * key is revoked after the "authorizer" vouched for it. Its 401 names the metadata like the
 * gateway's own (docs/oauth.md#endpoints).
 */
function mcpEvent(token: string, key: { id: number; store_id: string }, body: unknown): APIGatewayProxyEvent {
  const url = new URL(`${baseUrl()}/mcp`);
  return {
    resource: `${API_BASE_PATH}/mcp`,
    path: `${API_BASE_PATH}/mcp`,
    httpMethod: 'POST',
    headers: {
      host: url.host,
      'x-forwarded-proto': 'http',
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: JSON.stringify(body),
    isBase64Encoded: false,
    requestContext: {
      requestId: `req-${Date.now()}`,
      domainName: url.host,
      path: `${API_BASE_PATH}/mcp`,
      authorizer: {
        keyId: String(key.id),
        storeId: key.store_id,
        abilities: 'catalog:read',
        currency: 'EUR',
        rateLimit: '60',
        rateRemaining: '59',
        rateReset: '60',
        rateLimited: '0',
      },
    } as unknown as APIGatewayProxyEvent['requestContext'],
  };
}

describe('the MCP function’s 401 for a key revoked after the authorizer', () => {
  it('carries the challenge naming the metadata, with invalid_token', async () => {
    const key = await createKey(await createStore(), ['catalog:read']);
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_products', arguments: {} } };
    // The counter counts: before the revocation the same event passes the allowance.
    const before = await mcp(mcpEvent(key.token, key, call), {} as Context);
    expect(before.statusCode).toBe(200);
    await adminCommand('keys revoke', { id: key.id });
    const res = await mcp(mcpEvent(key.token, key, call), {} as Context);
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'unauthenticated', field: null });
    const root = baseUrl().slice(0, -API_BASE_PATH.length);
    expect(res.headers?.['WWW-Authenticate']).toBe(
      `Bearer resource_metadata="${root}/.well-known/oauth-protected-resource${API_BASE_PATH}", error="invalid_token"`,
    );
  });
});
