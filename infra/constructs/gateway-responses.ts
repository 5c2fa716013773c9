import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { gatewayResponseTable } from '#http/gateway-responses.ts';

const quoted = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, `'${v}'`]));

/**
 * Keeps API Gateway's own errors (before or instead of a Lambda) in the contract's JSON shape,
 * every type with its own status and code (shared/http/gateway-responses.ts, docs/gateway.md).
 */
export function addGatewayResponses(api: apigw.RestApi, rateLimitPerMinute: number): void {
  for (const spec of gatewayResponseTable(rateLimitPerMinute)) {
    api.addGatewayResponse(spec.type, {
      type: apigw.ResponseType.of(spec.type),
      statusCode: String(spec.status),
      templates: { 'application/json': JSON.stringify(spec.body) },
      responseHeaders: quoted({ 'Content-Type': 'application/json', ...spec.headers }),
    });
  }
}

/**
 * One JSON line per request in the access log, with the key and store the authorizer resolved
 * (its context keys are keyId and storeId, shared/http/api-routes.ts). Never the token.
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
