import type { APIGatewayProxyResult } from 'aws-lambda';
import type { DomainError, ErrorCode } from '#domain/errors.ts';
import { json } from './response.ts';

/**
 * Every error code with its HTTP status and when it is answered: the one source for the error
 * middleware, the MCP tool errors, stored idempotent answers and the error catalogue.
 */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, { status: number; when: string }>> = {
  invalid_json: { status: 400, when: 'The body is not valid JSON, or not a JSON object.' },
  idempotency_key_required: {
    status: 400,
    when: 'The Idempotency-Key header is missing or empty (field `Idempotency-Key`).',
  },
  bad_request: {
    status: 400,
    when: 'API Gateway refused the request before it reached the API, for a reason it has no more specific answer for (in AWS only).',
  },
  unauthenticated: { status: 401, when: 'The API key is missing, malformed, unknown, revoked or rotated away.' },
  forbidden: { status: 403, when: 'The key lacks the ability the operation needs; the message names it.' },
  not_found: { status: 404, when: 'The record or the route does not exist.' },
  method_not_allowed: {
    status: 405,
    when: 'The path exists but not with this method; `Allow` lists the methods it has.',
  },
  invalid_transition: { status: 409, when: 'The state machine forbids this status move.' },
  idempotency_in_progress: {
    status: 409,
    when: 'A request with the same Idempotency-Key is still being processed; `Retry-After` says when to retry.',
  },
  slug_taken: { status: 409, when: 'Another page of the store already has this slug (field `slug`).' },
  quantity_changed: {
    status: 409,
    when: 'A stock delta’s `expected_quantity` is not what the variant holds now (field `expected_quantity`); nothing was changed. Read the product and decide again.',
  },
  conflict: {
    status: 409,
    when: 'An admin command raced with another change of the same record, or the record already exists.',
  },
  precondition_failed: {
    status: 412,
    when: 'If-Match names another version than the current one (the product or draft changed since it was read), or If-None-Match: * met a record that exists (field `If-Match` or `If-None-Match`).',
  },
  payload_too_large: { status: 413, when: 'The body is larger than 1 MiB.' },
  validation_failed: {
    status: 422,
    when: 'A field is missing, of the wrong type, out of bounds or unknown; `field` names it.',
  },
  invalid_image_url: { status: 422, when: '`image_url` is not a public https address (field `image_url`).' },
  reserved_tag_value: { status: 422, when: 'The tag value is a status label (field `value`).' },
  unknown_reference: {
    status: 422,
    when: 'A category or tag external id does not exist for this key (field e.g. `category_external_ids[1]`).',
  },
  insufficient_stock: {
    status: 422,
    when: 'A stock delta would take the variant’s quantity below 0 (field `delta`); nothing was changed.',
  },
  status_not_allowed: { status: 422, when: '`paid` is set by the payment side only (field `status`).' },
  idempotency_key_reused: { status: 422, when: 'The Idempotency-Key was already used for a different request.' },
  write_budget_exceeded: {
    status: 429,
    when: "The key's write budget for this hour is spent (docs/api.md#write-budget); `Retry-After` says when the hour ends.",
  },
  rate_limited: {
    status: 429,
    when: 'The key is over its allowance; `Retry-After` says when the next request is admitted.',
  },
  internal_error: { status: 500, when: 'Anything unexpected; the message carries a request id that the logs know.' },
  service_unavailable: {
    status: 503,
    when:
      "The store is unreachable, throttling, or slower than the request's time budget; `Retry-After` says when to retry. A write refused so was not applied, " +
      'unless the store received it and then stopped answering: retrying it (same PUT, same Idempotency-Key) is safe either way (docs/availability.md).',
  },
  filter_too_broad: {
    status: 422,
    when: "A `filter[name]` needle that cannot be answered within the search's read budget (field `filter[name]`); a longer needle can.",
  },
  cursor_expired: {
    status: 410,
    when: 'A `GET /events` cursor older than the 30-day retention (field `cursor`); re-sync from the lists, then follow the events from the newest.',
  },
  unsupported_media_type: {
    status: 415,
    when: "API Gateway refused the body's media type before it reached the API (in AWS only); send `Content-Type: application/json`.",
  },
  bad_gateway: {
    status: 502,
    when: 'The function behind the route crashed, was throttled or answered malformed (in AWS only); retry after `Retry-After`, a write with the same `Idempotency-Key`.',
  },
  gateway_timeout: {
    status: 504,
    when: "No answer within API Gateway's 29 s (in AWS only). The request may still have been applied: retry a write with the same `Idempotency-Key`, or read before repeating it.",
  },
};

export const statusOf = (code: ErrorCode): number => ERROR_CATALOGUE[code].status;

export function errorBody(err: DomainError) {
  return { code: err.code, message: err.message, field: err.field };
}

export function errorHeaders(err: DomainError): Record<string, string> {
  return err.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(err.retryAfterSeconds) };
}

export function errorResponse(err: DomainError, headers: Record<string, string> = {}): APIGatewayProxyResult {
  return json(statusOf(err.code), errorBody(err), { ...errorHeaders(err), ...headers });
}
