/**
 * One JSON line per request in the access log, with the key and store the authorizer resolved
 * (its context keys are keyId and storeId, shared/http/api-routes.ts). Never the token.
 *
 * Apart from the construct that sets the format (api-stack.ts): the
 * bench's log-volume figures and the unit tests read the fields without loading aws-cdk-lib.
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
