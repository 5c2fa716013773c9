import type { APIGatewayProxyEvent } from 'aws-lambda';
import { principalToContext } from '#http/api-routes.ts';
import { ABILITIES } from '#domain/key/abilities.ts';

/**
 * POST /mcp as API Gateway hands it to the MCP function, from `key` (a key with every ability): for
 * running a bundle's handler outside the stack (`npm run bench`, test/infra/bundles.test.ts).
 * Set-up messages (initialize, tools/list, ping, notifications) use none of the allowance but count
 * against set-up's own limit on the key's token item, so they need its table (bench/mcp-table.ts).
 */
export function mcpEvent(
  body: string,
  key: { token: string; keyId: number; storeId: string },
  headers: Record<string, string> = {},
): APIGatewayProxyEvent {
  return {
    resource: '/api/v1/integrations/mcp',
    path: '/api/v1/integrations/mcp',
    httpMethod: 'POST',
    headers: {
      Host: 'api.example.com',
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${key.token}`,
      ...headers,
    },
    multiValueHeaders: {},
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body,
    isBase64Encoded: false,
    requestContext: {
      requestId: 'bundle-run',
      path: '/api/v1/integrations/mcp',
      authorizer: principalToContext(
        { keyId: key.keyId, storeId: key.storeId, abilities: [...ABILITIES], currency: 'EUR' },
        { allowed: true, limit: 60, remaining: 59, resetSeconds: 60 },
        null,
      ),
    },
  } as unknown as APIGatewayProxyEvent;
}

/** The messages a client opens with, as JSON-RPC. */
export const MCP_OPENING = {
  initialize: {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  },
  toolsList: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
} as const;

/**
 * A request on 2026-07-28 as the v2 SDK client sends it: no initialize; the revision, the client
 * and its capabilities in `params._meta` of every request, the revision and the method repeated in
 * headers (with the tool's name for a tools/call, which this helper does not build).
 */
export function modernMessage(
  id: number,
  method: 'server/discover' | 'tools/list',
): { message: object; headers: Record<string, string> } {
  return {
    message: {
      jsonrpc: '2.0',
      id,
      method,
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    },
    headers: { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': method },
  };
}
