import type { ErrorCode } from '../domain/errors.ts';

type GatewayBody = { code: ErrorCode; message: string; field: null };

/**
 * Bodies of the answers API Gateway gives itself (before or instead of a Lambda). The CDK stack
 * renders them as gateway responses and the local gateway sends them, so both say the same.
 */
export const GATEWAY_RESPONSES = {
  unauthorized: { code: 'unauthenticated', message: 'A valid API key is required (Authorization: Bearer <key>).', field: null },
  notFound: { code: 'not_found', message: 'No such endpoint.', field: null },
  tooLarge: { code: 'payload_too_large', message: 'The request body is larger than the API accepts.', field: null },
  throttled: { code: 'rate_limited', message: 'Too many requests; retry later.', field: null },
  badRequest: { code: 'bad_request', message: 'The request could not be processed.', field: null },
  forbidden: (ability: string) => ({ code: 'forbidden', message: `This key lacks the ability ${ability}.`, field: null }),
  internal: { code: 'internal_error', message: 'Something went wrong on our side.', field: null },
} satisfies Record<string, GatewayBody | ((ability: string) => GatewayBody)>;

/**
 * The challenge on every 401 (RFC 6750). Without a token the bare scheme; for a token that is not
 * (or no longer) a key, `error="invalid_token"`, so that a client that speaks OAuth reports a bad
 * key instead of starting an authorization flow. The authorizer lets such a token through with
 * `authError` in its context so that the handler can answer with the second form: a gateway
 * response cannot tell the two 401s apart.
 */
export const BEARER_CHALLENGE = 'Bearer';
export const INVALID_TOKEN_CHALLENGE = 'Bearer error="invalid_token", error_description="The API key is unknown, revoked or rotated away."';
