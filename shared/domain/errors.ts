/**
 * The errors of the domain, without HTTP: the contract's `code`, a message for people and the
 * field at fault. Storage, rules and use cases raise them; each front (HTTP, MCP, admin CLI)
 * decides how to answer them (shared/http/error-status.ts maps a code to its HTTP status).
 */
export const ERROR_CODES = [
  'invalid_json',
  'idempotency_key_required',
  'bad_request',
  'unauthenticated',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'invalid_transition',
  'idempotency_in_progress',
  'slug_taken',
  'quantity_changed',
  'conflict',
  'precondition_failed',
  'payload_too_large',
  'validation_failed',
  'invalid_image_url',
  'reserved_tag_value',
  'unknown_reference',
  'insufficient_stock',
  'status_not_allowed',
  'idempotency_key_reused',
  'rate_limited',
  'write_budget_exceeded',
  'resource_busy',
  'internal_error',
  'service_unavailable',
  'filter_too_broad',
  'cursor_expired',
  'unsupported_media_type',
  'bad_gateway',
  'gateway_timeout',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field: string | null = null,
    /** When a retry can succeed, after how many seconds (rate limit, a request still in progress). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const isErrorCode = (value: string): value is ErrorCode => (ERROR_CODES as readonly string[]).includes(value);
