/**
 * The error answers of one operation, from the one code → status table (ERROR_CATALOGUE): each
 * status the operation can answer, with the `{code, message, field}` shape narrowed to the codes
 * that status can carry there, and what each code means.
 */
import { canDryRun } from '../dry-run.ts';
import { ERROR_CODES, type ErrorCode } from '#domain/errors.ts';
import { OUTCOME_TABLE } from '../error-status.ts';
import { ERROR_CATALOGUE } from './error-catalogue.ts';
import type { ApiRoute } from '../api-routes.ts';
import type { OperationDoc } from './operations.ts';
import type { JsonSchema } from './json-schema.ts';

const IDEMPOTENCY_CODES: ErrorCode[] = [
  'idempotency_key_required',
  'idempotency_in_progress',
  'idempotency_key_reused',
];

/** Every code an operation can answer, the shared ones derived from what the operation takes. */
export function errorCodesOf(route: ApiRoute, doc: OperationDoc): ErrorCode[] {
  const codes = new Set<ErrorCode>(['unauthenticated', 'rate_limited', 'internal_error', 'service_unavailable']);
  if (route.ability !== null || route.anyOf) codes.add('forbidden');
  if (canDryRun(route.operation)) codes.add('write_budget_exceeded');
  const hasPathParameters = route.path.includes('{');
  if (hasPathParameters) codes.add('not_found');
  if (doc.body) codes.add('payload_too_large');
  if (doc.body && !doc.rawBody) codes.add('invalid_json');
  if (doc.query || hasPathParameters || (doc.body && !doc.rawBody)) codes.add('validation_failed');
  if (doc.idempotent) for (const c of IDEMPOTENCY_CODES) codes.add(c);
  for (const c of doc.errors ?? []) codes.add(c);
  return [...codes];
}

/** The codes whose answer carries Retry-After: the outcome table says which. */
const RETRY_CODES: ErrorCode[] = ERROR_CODES.filter((code) => OUTCOME_TABLE[code].retryAfter);

function headersOf(status: number, codes: ErrorCode[]): Record<string, object> {
  const headers: Record<string, object> = status === 401 ? requestIdHeaderRef() : responseHeaderRefs();
  const retrying = codes.filter((c) => RETRY_CODES.includes(c));
  if (retrying.length === codes.length) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' };
  else if (retrying.length > 0)
    headers['Retry-After'] = {
      description: `Seconds to wait before retrying; sent with ${retrying.map((c) => `\`${c}\``).join(', ')}.`,
      schema: { type: 'integer', minimum: 1 },
    };
  return headers;
}

const headerRefs = (names: string[]) =>
  Object.fromEntries(names.map((h) => [h, { $ref: `#/components/headers/${h}` }]));

/**
 * A 401 has no key to count, so no RateLimit-*. Its X-Request-Id is not promised: in AWS the 401
 * for a request without an Authorization header is API Gateway's own answer, and a gateway
 * response can map only request parameters and constants to headers, not the request id (that
 * answer carries API Gateway's x-amzn-RequestId). Every other 401 comes from a function and has it.
 */
export const requestIdHeaderRef = () => ({
  'X-Request-Id': {
    description:
      "The request's id (see the X-Request-Id component). Absent only on API Gateway's own 401 in AWS (no Authorization header), which carries x-amzn-RequestId instead.",
    schema: { type: 'string' },
  },
});

/** The headers every answer past the key check carries. */
export const responseHeaderRefs = () =>
  headerRefs(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);

/** A success of an operation that takes an Idempotency-Key may be a replay. */
export const replayableHeaderRefs = () => ({ ...responseHeaderRefs(), ...headerRefs(['Idempotent-Replayed']) });

export function errorSchemaFor(codes: readonly ErrorCode[]): JsonSchema {
  return { allOf: [{ $ref: '#/components/schemas/Error' }, { properties: { code: { enum: [...codes] } } }] };
}

/** `responses` entries keyed by status for the given codes. */
export function errorResponses(codes: readonly ErrorCode[]): Record<string, object> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOGUE[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, object> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CATALOGUE[c].when}`).join('\n\n'),
      headers: headersOf(status, list),
      content: { 'application/json': { schema: errorSchemaFor(list), example: exampleOf(list[0]!) } },
    };
  }
  return out;
}

function exampleOf(code: ErrorCode) {
  const field = code === 'validation_failed' ? 'price' : null;
  const { message, when } = ERROR_CATALOGUE[code];
  return { code, message: message ?? when.split(';')[0]!.replace(/\s*\(field.*\)\.?$/, '.'), field };
}
