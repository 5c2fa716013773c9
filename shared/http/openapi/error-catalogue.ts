import type { ErrorCode } from '#domain/errors.ts';
import { OUTCOME_TABLE } from '../error-status.ts';
import { UNAUTHORIZED_MESSAGE } from '../gateway-responses.ts';

/** When each error code is answered: the text of docs/errors.md and of the OpenAPI error answers. */
const ERROR_WHEN: Readonly<Record<ErrorCode, string>> = {
  invalid_json: 'The body is not valid JSON, or not a JSON object.',
  idempotency_key_required: 'The Idempotency-Key header is missing or empty (field `Idempotency-Key`).',
  bad_request:
    'API Gateway refused the request before it reached the API, for a reason it has no more specific answer for (in AWS only).',
  unauthenticated:
    'No valid API key or OAuth access token: the `Authorization` header is missing or malformed, or names a key that is unknown, revoked or rotated away, or an access token that expired, was revoked or is for another resource (docs/oauth.md#tokens).',
  forbidden: 'The key lacks the ability the operation needs; the message names it.',
  not_found: 'The record or the route does not exist.',
  method_not_allowed: 'The path exists but not with this method; `Allow` lists the methods it has.',
  invalid_transition: 'The state machine forbids this status move.',
  idempotency_in_progress:
    'A request with the same Idempotency-Key is still being processed; `Retry-After` says when to retry.',
  slug_taken: 'Another page of the store already has this slug (field `slug`).',
  quantity_changed:
    'A stock delta’s `expected_quantity` is not what the variant holds now (field `expected_quantity`); nothing was changed. Read the product and decide again.',
  conflict: 'An admin command raced with another change of the same record, or the record already exists.',
  precondition_failed:
    'If-Match names another version than the current one (the product or draft changed since it was read), or If-None-Match: * met a record that exists (field `If-Match` or `If-None-Match`).',
  payload_too_large: 'The body is larger than 1 MiB.',
  validation_failed: 'A field is missing, of the wrong type, out of bounds or unknown; `field` names it.',
  invalid_image_url: '`image_url` is not a public https address (field `image_url`).',
  reserved_tag_value: 'The tag value is a status label (field `value`).',
  unknown_reference:
    'A category or tag external id does not exist for this key (field e.g. `category_external_ids[1]`).',
  insufficient_stock: 'A stock delta would take the variant’s quantity below 0 (field `delta`); nothing was changed.',
  status_not_allowed: '`paid` is set by the payment side only (field `status`).',
  idempotency_key_reused: 'The Idempotency-Key was already used for a different request.',
  write_budget_exceeded:
    "The key's write budget for this hour is spent (docs/api.md#write-budget); `Retry-After` says when the hour ends.",
  rate_limited:
    'The key is over its allowance, or sent more requests at the same moment than its count takes in turn (the message says which); `Retry-After` says when the next request is admitted.',
  resource_busy:
    'The write kept losing to other writes of the same record (a hot product, an order or page changed by several writers at once) and was refused; nothing was written. `Retry-After` says when to send it again, unchanged (docs/catalog-writes.md#one-hot-product). Not a rate limit: the RateLimit-* headers still describe the allowance.',
  internal_error: 'Anything unexpected; the message carries a request id that the logs know.',
  service_unavailable:
    "The store is unreachable, throttling, or slower than the request's time budget; `Retry-After` says when to retry. A write refused so was not applied, " +
    'unless the store received it and then stopped answering: retrying it (same PUT, same Idempotency-Key) is safe either way (docs/availability.md).',
  filter_too_broad:
    "A `filter[name]` needle that cannot be answered within the search's read budget (field `filter[name]`); a longer needle can.",
  cursor_expired:
    'A `GET /events` cursor older than the 30-day retention (field `cursor`); re-sync from the lists, then follow the events from the newest.',
  unsupported_media_type:
    "API Gateway refused the body's media type before it reached the API (in AWS only); send `Content-Type: application/json`.",
  bad_gateway:
    'The function behind the route failed (an error, out of memory, its timeout) or was throttled; retry after `Retry-After`, a write with the same `Idempotency-Key`.',
  gateway_timeout:
    "No answer within API Gateway's 29 s (in AWS only). The request may still have been applied: retry a write with the same `Idempotency-Key`, or read before repeating it.",
};

/**
 * The codes whose answers all carry one message, as the code that answers them holds it: the
 * OpenAPI example shows it word for word (the others' examples are taken from when they are answered).
 */
const ERROR_MESSAGE: Readonly<Partial<Record<ErrorCode, string>>> = { unauthenticated: UNAUTHORIZED_MESSAGE };

export interface ErrorCatalogueEntry {
  status: number;
  when: string;
  /** The message every answer of this code carries, where there is one. */
  message?: string;
}

/**
 * Every error code with its HTTP status (shared/http/error-status.ts) and when it is answered:
 * the error catalogue (docs/errors.md) and the OpenAPI document. The texts stay out of the
 * Lambda bundles, which need only the statuses.
 */
export const ERROR_CATALOGUE: Readonly<Record<ErrorCode, ErrorCatalogueEntry>> = Object.fromEntries(
  (Object.keys(ERROR_WHEN) as ErrorCode[]).map((code) => [
    code,
    {
      status: OUTCOME_TABLE[code].status,
      when: ERROR_WHEN[code],
      ...(ERROR_MESSAGE[code] === undefined ? {} : { message: ERROR_MESSAGE[code] }),
    },
  ]),
) as Record<ErrorCode, ErrorCatalogueEntry>;
