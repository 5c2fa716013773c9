import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { BEARER_CHALLENGE, GATEWAY_RESPONSES } from '../../shared/http/gateway-responses.ts';

const template = (body: object) => ({ 'application/json': JSON.stringify(body) });

/** Keeps API Gateway's own errors (before or instead of a Lambda) in the contract's JSON shape. */
export function addGatewayResponses(api: apigw.RestApi): void {
  const json = { 'Content-Type': "'application/json'" };
  const responses: [string, apigw.ResponseType, string, object, Record<string, string>?][] = [
    // No token at all (a wrong one reaches the handler, which answers with error="invalid_token").
    ['Unauthorized', apigw.ResponseType.UNAUTHORIZED, '401', GATEWAY_RESPONSES.unauthorized, { 'WWW-Authenticate': `'${BEARER_CHALLENGE}'` }],
    ['AccessDenied', apigw.ResponseType.ACCESS_DENIED, '403', GATEWAY_RESPONSES.forbidden('$context.authorizer.missingAbility')],
    // API Gateway answers an unknown route with "Missing Authentication Token" (403): it is a 404.
    ['MissingRoute', apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, '404', GATEWAY_RESPONSES.notFound],
    ['ResourceNotFound', apigw.ResponseType.RESOURCE_NOT_FOUND, '404', GATEWAY_RESPONSES.notFound],
    ['TooLarge', apigw.ResponseType.REQUEST_TOO_LARGE, '413', GATEWAY_RESPONSES.tooLarge],
    ['Throttled', apigw.ResponseType.THROTTLED, '429', GATEWAY_RESPONSES.throttled, { 'Retry-After': "'1'" }],
    ['AuthorizerFailure', apigw.ResponseType.AUTHORIZER_FAILURE, '500', GATEWAY_RESPONSES.internal],
    ['Default4xx', apigw.ResponseType.DEFAULT_4XX, '400', GATEWAY_RESPONSES.badRequest],
    ['Default5xx', apigw.ResponseType.DEFAULT_5XX, '500', GATEWAY_RESPONSES.internal],
  ];
  for (const [id, type, statusCode, body, headers] of responses) {
    api.addGatewayResponse(id, { type, statusCode, templates: template(body), responseHeaders: { ...json, ...headers } });
  }
}

/**
 * One JSON line per request in the access log, with the key and store the authorizer resolved
 * (its context keys are keyId and storeId, shared/http/authorizer-context.ts). Never the token.
 */
export const ACCESS_LOG_FIELDS = {
  request_id: '$context.requestId',
  extended_request_id: '$context.extendedRequestId',
  time: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  user_agent: '$context.identity.userAgent',
  method: '$context.httpMethod',
  resource: '$context.resourcePath',
  path: '$context.path',
  status: '$context.status',
  response_length: '$context.responseLength',
  latency_ms: '$context.responseLatency',
  integration_latency_ms: '$context.integration.latency',
  key_id: '$context.authorizer.keyId',
  store_id: '$context.authorizer.storeId',
  authorizer_status: '$context.authorizer.status',
  authorizer_latency_ms: '$context.authorizer.latency',
  error: '$context.error.responseType',
  waf_status: '$context.waf.status',
  xray_trace_id: '$context.xrayTraceId',
};
