import type { APIGatewayProxyResult } from 'aws-lambda';
import { DomainError, type ErrorCode } from '#domain/errors.ts';
import { errorFields, log } from '#shared/log.ts';
import { json, type RouteResult } from './response.ts';

/**
 * The outcome table: every error code's HTTP status, and whether the answer tells the caller when
 * to come back (`Retry-After`, from the outcome's `retryAfterSeconds`). The one source for the
 * HTTP error body, the MCP tool errors, stored idempotent answers and the error catalogue (when
 * each is answered: shared/http/openapi/error-catalogue.ts, kept out of the Lambda bundles). Which
 * codes a caller can cause and which are faults: shared/domain/outcome.ts.
 */
export const OUTCOME_TABLE: Readonly<Record<ErrorCode, { status: number; retryAfter?: true }>> = {
  invalid_json: { status: 400 },
  idempotency_key_required: { status: 400 },
  bad_request: { status: 400 },
  unauthenticated: { status: 401 },
  forbidden: { status: 403 },
  not_found: { status: 404 },
  method_not_allowed: { status: 405 },
  invalid_transition: { status: 409 },
  idempotency_in_progress: { status: 409, retryAfter: true },
  slug_taken: { status: 409 },
  quantity_changed: { status: 409 },
  conflict: { status: 409 },
  precondition_failed: { status: 412 },
  payload_too_large: { status: 413 },
  validation_failed: { status: 422 },
  invalid_image_url: { status: 422 },
  reserved_tag_value: { status: 422 },
  unknown_reference: { status: 422 },
  insufficient_stock: { status: 422 },
  status_not_allowed: { status: 422 },
  idempotency_key_reused: { status: 422 },
  write_budget_exceeded: { status: 429, retryAfter: true },
  rate_limited: { status: 429, retryAfter: true },
  resource_busy: { status: 429, retryAfter: true },
  internal_error: { status: 500 },
  service_unavailable: { status: 503, retryAfter: true },
  filter_too_broad: { status: 422 },
  cursor_expired: { status: 410 },
  unsupported_media_type: { status: 415 },
  bad_gateway: { status: 502 },
  gateway_timeout: { status: 504 },
};

export const statusOf = (code: ErrorCode): number => OUTCOME_TABLE[code].status;

/**
 * What every surface presents: an outcome the caller caused (`Refused`, shared/domain/outcome.ts)
 * or a fault; a thrown DomainError has the same shape.
 */
export interface Problem {
  code: ErrorCode;
  message: string;
  field: string | null;
  retryAfterSeconds?: number | undefined;
}

/**
 * A thrown value as the problem to present: a DomainError as it is; anything else is a bug,
 * logged here with its cause (never shown to the caller) and answered `internal_error` with the
 * request id the log line carries, so a caller can quote it.
 */
export function problemOf(err: unknown, requestId: string, logFields: Record<string, unknown> = {}): Problem {
  if (err instanceof DomainError) return err;
  log('error', 'unhandled error', { request_id: requestId, ...logFields, ...errorFields(err) });
  return {
    code: 'internal_error',
    message: `Something went wrong on our side. Request id: ${requestId}.`,
    field: null,
  };
}

export function errorBody(problem: Problem) {
  return { code: problem.code, message: problem.message, field: problem.field };
}

export function errorHeaders(problem: Problem): Record<string, string> {
  return OUTCOME_TABLE[problem.code].retryAfter && problem.retryAfterSeconds !== undefined
    ? { 'Retry-After': String(problem.retryAfterSeconds) }
    : {};
}

/** The HTTP presentation: the table's status, the contract's JSON body, Retry-After where it applies. */
export function errorResponse(problem: Problem, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return json(statusOf(problem.code), errorBody(problem), { ...errorHeaders(problem), ...headers });
}

/** A route's answer for an outcome it was handed: the HTTP presentation above, as a route result (MCP reads it too). */
export const problemResult = (problem: Problem): RouteResult => ({
  status: statusOf(problem.code),
  body: errorBody(problem),
  headers: errorHeaders(problem),
});
