import type { APIGatewayProxyResult } from 'aws-lambda';
import type { DomainError, ErrorCode } from '#domain/errors.ts';
import { json } from './response.ts';

/**
 * Every error code's HTTP status: the one source for the error middleware, the MCP tool errors,
 * stored idempotent answers and the error catalogue (when each is answered:
 * shared/http/openapi/error-catalogue.ts, kept out of the Lambda bundles).
 */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = {
  invalid_json: 400,
  idempotency_key_required: 400,
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_transition: 409,
  idempotency_in_progress: 409,
  slug_taken: 409,
  quantity_changed: 409,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  validation_failed: 422,
  invalid_image_url: 422,
  reserved_tag_value: 422,
  unknown_reference: 422,
  insufficient_stock: 422,
  status_not_allowed: 422,
  idempotency_key_reused: 422,
  write_budget_exceeded: 429,
  rate_limited: 429,
  resource_busy: 429,
  internal_error: 500,
  service_unavailable: 503,
  filter_too_broad: 422,
  cursor_expired: 410,
  unsupported_media_type: 415,
  bad_gateway: 502,
  gateway_timeout: 504,
};

export const statusOf = (code: ErrorCode): number => ERROR_STATUS[code];

export function errorBody(err: DomainError) {
  return { code: err.code, message: err.message, field: err.field };
}

export function errorHeaders(err: DomainError): Record<string, string> {
  return err.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(err.retryAfterSeconds) };
}

export function errorResponse(err: DomainError, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return json(statusOf(err.code), errorBody(err), { ...errorHeaders(err), ...headers });
}
