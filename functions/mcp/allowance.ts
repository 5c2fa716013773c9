import type { RequestContext } from '#shared/context.ts';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { claimMcpAllowance } from '#app/authenticate.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { refusalMessage } from '#domain/key/api-key.ts';
import { bearerToken } from '#http/bearer.ts';
import { challengeHeaders } from '#http/challenge.ts';
import { UNAUTHORIZED_MESSAGE } from '#http/gateway-responses.ts';

/**
 * Session set-up uses none of the key's allowance but a generous limit of its own
 * (docs/mcp.md#rate-limit): these methods, and every notification.
 */
const SET_UP = new Set(['initialize', 'ping', 'tools/list', 'server/discover']);

/** Whether `message` (the parsed body; undefined if it is not JSON) is one of those. */
export function isSetUp(message: unknown): boolean {
  const method = typeof message === 'object' && message !== null ? (message as { method?: unknown }).method : undefined;
  return typeof method === 'string' && (SET_UP.has(method) || method.startsWith('notifications/'));
}

/**
 * Counts the request the authorizer left uncounted (it cannot see the body), with the same
 * conditional write on the token item as the authorizer's: a tool call against the key's allowance,
 * set-up against its own limit. Refused 429 when the one it counts against is spent, and 401 for a
 * key revoked since the authorizer saw it; undefined when the request may go on. The RateLimit-* headers describe the allowance: a tool call's
 * after counting it, set-up's as the authorizer saw it, a refused set-up's its own limit's.
 */
export async function claimAllowance(
  ctx: RequestContext,
  event: APIGatewayProxyEvent,
  state: { responseHeaders?: Record<string, string> },
  setUp: boolean,
): Promise<Refused | undefined> {
  const auth = await claimMcpAllowance(ctx, bearerToken(event.headers) ?? '', setUp);
  if (!auth.ok) {
    // Revoked between the authorizer's read and this one: the same challenge as the gateway's 401.
    state.responseHeaders = challengeHeaders(event, true);
    return refused('unauthenticated', UNAUTHORIZED_MESSAGE);
  }
  const { rate } = auth;
  if (setUp && rate.allowed) return undefined;
  state.responseHeaders = {
    'RateLimit-Limit': String(rate.limit),
    'RateLimit-Remaining': String(rate.remaining),
    'RateLimit-Reset': String(rate.resetSeconds),
  };
  if (rate.allowed) return undefined;
  return refused(
    'rate_limited',
    setUp && !rate.contended
      ? `This key exceeded its limit of ${rate.limit} MCP set-up requests (initialize, tools/list, ping, notifications) per minute.`
      : refusalMessage(rate),
    null,
    rate.resetSeconds,
  );
}
