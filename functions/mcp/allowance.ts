import type { APIGatewayProxyEvent } from 'aws-lambda';
import { authenticate } from '#db/key/auth.repo.ts';
import { hashToken } from '#domain/key/api-key.ts';
import { DomainError } from '#domain/errors.ts';
import { config } from '#shared/config.ts';
import { bearerToken } from '#functions/authorizer/handler.ts';

/**
 * Session set-up costs a connecting client nothing of its key's allowance
 * (docs/mcp.md#rate-limit): these methods, and every notification, use no allowance.
 */
const SET_UP = new Set(['initialize', 'ping', 'tools/list']);

/** Whether `message` (the parsed body; undefined if it is not JSON) is one of those. */
export function isSetUp(message: unknown): boolean {
  const method = typeof message === 'object' && message !== null ? (message as { method?: unknown }).method : undefined;
  return typeof method === 'string' && (SET_UP.has(method) || method.startsWith('notifications/'));
}

/**
 * Counts the request the authorizer left uncounted (it cannot see the body), with the same
 * conditional write on the token item as the authorizer's: the RateLimit-* headers of the answer,
 * or 429 when the allowance is spent, and 401 for a key revoked since the authorizer saw it.
 */
export async function claimAllowance(
  event: APIGatewayProxyEvent,
  state: { responseHeaders?: Record<string, string> },
): Promise<void> {
  const token = bearerToken(event.headers) ?? '';
  const auth = await authenticate(hashToken(token), Date.now(), config().rateLimitPerMinute);
  if (!auth.ok) throw new DomainError('unauthenticated', 'A valid API key is required (Authorization: Bearer <key>).');
  const { rate } = auth;
  state.responseHeaders = {
    'RateLimit-Limit': String(rate.limit),
    'RateLimit-Remaining': String(rate.remaining),
    'RateLimit-Reset': String(rate.resetSeconds),
  };
  if (!rate.allowed)
    throw new DomainError(
      'rate_limited',
      `This key exceeded its allowance of ${rate.limit} requests per minute.`,
      null,
      rate.resetSeconds,
    );
}
