import type { ErrorCode } from '#domain/errors.ts';

type GatewayBody = { code: ErrorCode; message: string; field: null };

/**
 * The 401's words: the same for a chat app holding an OAuth token as for an integration holding a
 * key. Its own export so that a function answering it (the middleware, the MCP server) bundles
 * this sentence and not the whole table below (~1.2 KB of the MCP bundle).
 */
export const UNAUTHORIZED_MESSAGE =
  'A valid API key or OAuth access token is required (Authorization: Bearer <key or token>).';

/**
 * Bodies of the answers API Gateway gives itself (before or instead of a Lambda). The CDK stack
 * renders them as gateway responses and the local gateway sends them, so both say the same.
 */
export const GATEWAY_RESPONSES = {
  unauthorized: {
    code: 'unauthenticated',
    message: UNAUTHORIZED_MESSAGE,
    field: null,
  },
  notFound: { code: 'not_found', message: 'No such endpoint.', field: null },
  tooLarge: { code: 'payload_too_large', message: 'The request body is larger than the API accepts.', field: null },
  throttled: { code: 'rate_limited', message: 'Too many requests; retry later.', field: null },
  badRequest: { code: 'bad_request', message: 'The request could not be processed.', field: null },
  internal: { code: 'internal_error', message: 'Something went wrong on our side.', field: null },
  unavailable: {
    code: 'service_unavailable',
    message: 'The API cannot check keys right now; retry shortly.',
    field: null,
  },
  unsupportedMediaType: {
    code: 'unsupported_media_type',
    message: "The body's media type is not accepted; send application/json.",
    field: null,
  },
  gatewayTimeout: {
    code: 'gateway_timeout',
    message: 'The service did not answer in time; the request may have been applied.',
    field: null,
  },
  firewall: { code: 'forbidden', message: 'The request was refused by the firewall.', field: null },
} satisfies Record<string, GatewayBody>;

/**
 * The challenge on every 401 (RFC 6750), naming the protected-resource metadata (RFC 9728 §5.1) so
 * that an OAuth client (an MCP host) can start the authorization flow (docs/oauth.md). Without a
 * token the scheme and the metadata; for a token that is not (or no longer) good,
 * `error="invalid_token"` beside it, so that a client reports a bad token instead of starting an
 * authorization flow. A gateway response's headers are constants, so the two 401s are two response
 * types: UNAUTHORIZED (no token) and ACCESS_DENIED (the authorizer's Deny of a token that is no
 * key; it never denies a key, see functions/authorizer). No error_description: the WAF's copy of
 * this header is limited to 255 characters (infra/constructs/rate-limit-web-acl.ts).
 */
export const bearerChallenge = (metadataUrl: string) => `Bearer resource_metadata="${metadataUrl}"`;
export const invalidTokenChallenge = (metadataUrl: string) =>
  `Bearer resource_metadata="${metadataUrl}", error="invalid_token"`;

/** API Gateway's gateway response types (AWS::ApiGateway::GatewayResponse ResponseType). */
export type GatewayResponseType =
  | 'ACCESS_DENIED'
  | 'API_CONFIGURATION_ERROR'
  | 'AUTHORIZER_CONFIGURATION_ERROR'
  | 'AUTHORIZER_FAILURE'
  | 'BAD_REQUEST_PARAMETERS'
  | 'BAD_REQUEST_BODY'
  | 'DEFAULT_4XX'
  | 'DEFAULT_5XX'
  | 'EXPIRED_TOKEN'
  | 'INTEGRATION_FAILURE'
  | 'INTEGRATION_TIMEOUT'
  | 'INVALID_API_KEY'
  | 'INVALID_SIGNATURE'
  | 'MISSING_AUTHENTICATION_TOKEN'
  | 'QUOTA_EXCEEDED'
  | 'REQUEST_TOO_LARGE'
  | 'RESOURCE_NOT_FOUND'
  | 'THROTTLED'
  | 'UNAUTHORIZED'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'WAF_FILTERED';

export interface GatewayResponseSpec {
  type: GatewayResponseType;
  status: number;
  body: GatewayBody;
  /** Constant header values (a gateway response can compute none from the request's outcome). */
  headers: Record<string, string>;
  /** When a client sees it, for docs/gateway.md. */
  when: string;
}

/** Seconds a client waits after a gateway 429, 502 or 503. */
const GATEWAY_RETRY_AFTER_SECONDS = 1;

/**
 * API Gateway's answer when a Lambda proxy integration fails: the function threw, ran out of
 * memory, hit its own timeout (every API function's is shorter than the 29 s integration timeout,
 * test/infra/gateway-responses.test.ts), returned more than 6 MB, or Lambda refused to run it.
 * AWS renders a function error through the INTEGRATION_FAILURE gateway response (the
 * `$context.error.responseType` of its access log: a deployed API's, at
 * https://github.com/DataBiosphere/azul/issues/8258; LocalStack models a refused invocation the
 * same way), with the cause's own status when the response sets none: 502 for a function error,
 * 500 for a refused invocation
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html), not the 504 the
 * table of types gives it
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/supported-gateway-response-types.html).
 * Ours sets 502 for every cause, and the local gateway answers the same (emulation/local/gateway.ts).
 */
export function functionFailed(): { status: number; body: GatewayBody; headers: Record<string, string> } {
  // A function, not a constant: a bundle that imports another export of this file leaves it out.
  return {
    status: 502,
    body: { code: 'bad_gateway', message: 'The service behind this route failed; retry shortly.', field: null },
    headers: { 'Retry-After': String(GATEWAY_RETRY_AFTER_SECONDS) },
  };
}

/**
 * Every gateway response type, each with an explicit status and a catalogued code, so that
 * DEFAULT_4XX/DEFAULT_5XX (which would otherwise lend their status to every type left out) cover
 * nothing. On a 429 the RateLimit-* values are constants: the gateway knows neither the key nor
 * what is left of its allowance, so Limit is the per-key allowance, Remaining 0 and Reset the
 * Retry-After. docs/gateway.md is generated from this table (infra/gateway-docs.ts).
 */
export function gatewayResponseTable(rateLimitPerMinute: number, metadataUrl: string): GatewayResponseSpec[] {
  const challenge = { 'WWW-Authenticate': bearerChallenge(metadataUrl) };
  const retry = String(GATEWAY_RETRY_AFTER_SECONDS);
  const limited = {
    'Retry-After': retry,
    'RateLimit-Limit': String(rateLimitPerMinute),
    'RateLimit-Remaining': '0',
    'RateLimit-Reset': retry,
  };
  const r = (
    type: GatewayResponseType,
    status: number,
    body: GatewayBody,
    when: string,
    headers: Record<string, string> = {},
  ): GatewayResponseSpec => ({
    type,
    status,
    body,
    headers,
    when,
  });
  const G = GATEWAY_RESPONSES;
  const failed = functionFailed();
  return [
    r('UNAUTHORIZED', 401, G.unauthorized, 'No Authorization header, or the authorizer refused it.', challenge),
    r(
      'ACCESS_DENIED',
      401,
      G.unauthorized,
      'The authorizer denied a token that is no key (malformed, unknown, revoked or rotated away); no group Lambda ran. It never denies a key: the handler answers a missing ability (403).',
      { 'WWW-Authenticate': invalidTokenChallenge(metadataUrl) },
    ),
    r(
      'MISSING_AUTHENTICATION_TOKEN',
      404,
      G.notFound,
      "No such path: API Gateway's own answer to an unknown route is a 403, here a 404.",
    ),
    r('RESOURCE_NOT_FOUND', 404, G.notFound, 'No such path.'),
    r('REQUEST_TOO_LARGE', 413, G.tooLarge, 'The body exceeds what API Gateway or Lambda accepts.'),
    r('UNSUPPORTED_MEDIA_TYPE', 415, G.unsupportedMediaType, "API Gateway cannot pass the body's media type on."),
    r('THROTTLED', 429, G.throttled, 'The stage throttle (shared by every tenant) is spent.', limited),
    r('QUOTA_EXCEEDED', 429, G.throttled, 'A usage-plan quota is spent (none is configured today).', limited),
    r(
      'BAD_REQUEST_PARAMETERS',
      400,
      G.badRequest,
      'A request validator refused a parameter (none is configured today).',
    ),
    r('BAD_REQUEST_BODY', 400, G.badRequest, 'A request validator refused the body (none is configured today).'),
    r(
      'INVALID_API_KEY',
      401,
      G.unauthorized,
      'An API Gateway API key was required and wrong (none is required today).',
      challenge,
    ),
    r('INVALID_SIGNATURE', 401, G.unauthorized, 'A SigV4 signature was wrong (no method uses IAM auth).', challenge),
    r('EXPIRED_TOKEN', 401, G.unauthorized, 'A SigV4 token expired (no method uses IAM auth).', challenge),
    r(
      'WAF_FILTERED',
      403,
      G.firewall,
      'A web ACL rule without a custom response blocked the request (ours all have one).',
    ),
    r(
      'AUTHORIZER_FAILURE',
      503,
      G.unavailable,
      'The authorizer failed or timed out (the key store is unreachable); nothing ran.',
      { 'Retry-After': retry },
    ),
    r('AUTHORIZER_CONFIGURATION_ERROR', 500, G.internal, 'The authorizer answered something API Gateway cannot read.'),
    r('API_CONFIGURATION_ERROR', 500, G.internal, 'The deployment is misconfigured.'),
    r(
      'INTEGRATION_FAILURE',
      failed.status,
      failed.body,
      'The function failed (an error, out of memory, its own timeout, a result over 6 MB) or Lambda refused to run it (throttled).',
      failed.headers,
    ),
    r(
      'INTEGRATION_TIMEOUT',
      504,
      G.gatewayTimeout,
      "No answer within the integration's 29 s; an API function's own timeout comes first (`INTEGRATION_FAILURE`).",
    ),
    r('DEFAULT_4XX', 400, G.badRequest, 'Any other 4xx API Gateway adds later.'),
    r('DEFAULT_5XX', 500, G.internal, 'Any other 5xx API Gateway adds later.'),
  ];
}
