import type { APIGatewayProxyEvent } from 'aws-lambda';
import { resourceMetadataUrl } from './api-routes.ts';
import { bearerChallenge, invalidTokenChallenge } from './gateway-responses.ts';
import { apiOrigin } from './origin.ts';

/**
 * The API's root URL as this request reached it (the OAuth issuer, docs/oauth.md): the origin and,
 * on an execute-api host, the stage. There it is the URL the gateway's own 401s name, joined at
 * deploy time (infra/api-stack.ts).
 */
export function apiRoot(event: Pick<APIGatewayProxyEvent, 'headers' | 'path' | 'requestContext'>): string {
  const full = event.requestContext?.path ?? event.path;
  return apiOrigin(event) + (full.endsWith(event.path) ? full.slice(0, full.length - event.path.length) : '');
}

/**
 * The `WWW-Authenticate` of a 401 a handler answers itself (a key revoked after the authorizer saw
 * it, a route behind no authorizer by misconfiguration): the same challenge as the gateway's 401s,
 * naming the protected-resource metadata, with `error="invalid_token"` when a token was sent.
 */
export function challengeHeaders(
  event: Pick<APIGatewayProxyEvent, 'headers' | 'path' | 'requestContext'>,
  tokenSent: boolean,
): Record<string, string> {
  const metadataUrl = resourceMetadataUrl(apiRoot(event));
  return { 'WWW-Authenticate': tokenSent ? invalidTokenChallenge(metadataUrl) : bearerChallenge(metadataUrl) };
}
