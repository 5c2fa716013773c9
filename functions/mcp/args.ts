import { refused, type Refused } from '#domain/outcome.ts';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from '#domain/idempotency.ts';

/** Tool arguments as they arrive: typed JSON (page is a number, not "2"). */
export type Args = Record<string, unknown>;

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/**
 * A path segment as a client sends it, which is also the idempotency scope's path: ids and
 * references of the contract's alphabet (`A-Z a-z 0-9 . _ : -`) need no escaping and go as they
 * are; anything else is encoded, and the route decodes it once as under API Gateway and refuses it.
 */
export const pathSegment = (value: string) => (/^[A-Za-z0-9._:-]+$/.test(value) ? value : encodeURIComponent(value));

/** The arguments other than `taken`: the request body of a write tool. */
export function rest(args: Args, taken: readonly string[]): Args {
  return Object.fromEntries(Object.entries(args).filter(([k]) => !taken.includes(k)));
}

export const IDEMPOTENCY_ARG = 'idempotency_key';

/**
 * The `idempotency_key` argument, checked by the same rule as the Idempotency-Key header
 * (docs/contract.md#idempotency) but named as the argument a tool caller sent.
 */
export function idempotencyKeyArg(args: Args): string | Refused {
  const value = args[IDEMPOTENCY_ARG];
  if (value !== undefined && typeof value !== 'string') {
    return refused('validation_failed', `${IDEMPOTENCY_ARG} must be a string, got ${describe(value)}`, IDEMPOTENCY_ARG);
  }
  const parsed = parseIdempotencyKey(value);
  if (parsed.ok) return value as string;
  const message = parsed.message
    .replace(`The ${IDEMPOTENCY_HEADER} header`, `The ${IDEMPOTENCY_ARG} argument`)
    .replace(IDEMPOTENCY_HEADER, IDEMPOTENCY_ARG);
  return refused(
    parsed.reason === 'missing' ? 'idempotency_key_required' : 'validation_failed',
    message,
    IDEMPOTENCY_ARG,
  );
}
