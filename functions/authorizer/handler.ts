import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authenticateToken } from '#app/authenticate.ts';
import { findRoute, principalToContext } from '#http/api-routes.ts';
import { instrument } from '#http/http-handler.ts';
import { bearerToken } from '#http/bearer.ts';

/** API Gateway's contract for "401": throw exactly this message. */
const unauthorized = () => new Error('Unauthorized');

/**
 * A token that is no key (malformed, unknown, revoked, rotated away): an explicit Deny, which API
 * Gateway answers itself with its ACCESS_DENIED gateway response (401 `unauthenticated`,
 * `WWW-Authenticate: Bearer error="invalid_token"`, shared/http/gateway-responses.ts), so no
 * group Lambda runs for it. A thrown "Unauthorized" would also stop it, but as the bare-scheme 401
 * of a missing token: the two 401s need two gateway response types.
 */
function invalidToken(methodArn: string): APIGatewayAuthorizerResult {
  return {
    principalId: 'invalid-token',
    policyDocument: {
      Version: '2012-10-17',
      Statement: [{ Action: 'execute-api:Invoke', Effect: 'Deny', Resource: methodArn }],
    },
  };
}

/**
 * Resolves the bearer token to key, store and abilities in one conditional UpdateItem that also
 * counts the request against the rate limit. It denies a token that is no key and lets every valid key through to exactly this method, with its
 * verdicts in the context: a missing ability and a spent allowance are answered by the handler's
 * first middleware (403 naming the ability, 429), because an authorizer cannot answer 429 and a
 * gateway Deny cannot carry the RateLimit-* headers every response must have (gateway responses
 * take headers only from the request or from constants).
 */
export const handler = instrument(
  async (event: APIGatewayRequestAuthorizerEvent, _context, ctx): Promise<APIGatewayAuthorizerResult> => {
    const token = bearerToken(event.headers);
    if (!token) throw unauthorized();
    const route = findRoute(event.httpMethod, event.resource);
    // Requests the handler will refuse (403) use no allowance: a key lacking the ability.
    // MCP: session set-up (initialize, tools/list, notifications) uses no allowance but a limit of
    // its own, and only the body tells it from a tool call, which an authorizer never sees; so the
    // authorizer counts nothing for /mcp and the MCP handler counts each request against the one it
    // belongs to (docs/mcp.md#rate-limit).
    const mcp = route?.group === 'mcp';
    // A token that is no key, or an OAuth access token for another resource (RFC 8707): refused
    // here, never handed to the group Lambda.
    const auth = await authenticateToken(
      ctx,
      token,
      { ability: route?.ability ?? null, counted: !mcp },
      event.resource,
    );
    if (!auth.ok) return invalidToken(event.methodArn);
    Object.assign(ctx.log, { key_id: auth.principal.keyId, store_id: auth.principal.storeId });
    // A route without an ability (MCP) admits any valid key; its tools check their own abilities.
    const missing = route?.ability && !auth.principal.abilities.includes(route.ability) ? route.ability : null;
    return {
      principalId: `key:${auth.principal.keyId}`,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: event.methodArn }],
      },
      context: principalToContext(
        auth.principal,
        mcp ? { ...auth.rate, allowed: true, remaining: auth.rate.allowed ? auth.rate.remaining + 1 : 0 } : auth.rate,
        missing,
      ),
    };
  },
  (event) => ({ authorizer: true, method: event.httpMethod, resource: event.resource }),
);
