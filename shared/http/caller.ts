import type { APIGatewayProxyEvent } from 'aws-lambda';
import type { Caller } from '#domain/oauth/approval.ts';

/**
 * Who sent a request, as API Gateway saw it: `requestContext.identity.sourceIp` (the address of the
 * TCP connection that reached API Gateway; the local gateway and the rehearsal put the socket's
 * peer there) and the User-Agent. Never a header that names an address (X-Forwarded-For,
 * Forwarded): the caller writes those.
 */
export function callerOf(event: Pick<APIGatewayProxyEvent, 'headers' | 'requestContext'>): Caller {
  const identity = event.requestContext?.identity;
  const header = Object.entries(event.headers ?? {}).find(([name]) => name.toLowerCase() === 'user-agent')?.[1];
  return { ip: identity?.sourceIp || null, userAgent: identity?.userAgent ?? header ?? null };
}
