import { DomainError, validationFailed } from '../../shared/domain/errors.ts';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from '../../shared/domain/idempotency.ts';

/**
 * Reading tool arguments. Arguments arrive as typed JSON (page is a number, not "2"), so each
 * reader checks the JSON type and names the argument on failure (422 `validation_failed`); the
 * bounds and formats stay with the route functions, so tools and endpoints answer the same 422s.
 */
export type Args = Record<string, unknown>;

/** An argument the tool does not take is a 422 naming it, as an unknown body field is. */
export function onlyKnown(args: Args, known: readonly string[]): void {
  const unknown = Object.keys(args).find((k) => !known.includes(k));
  if (unknown !== undefined) throw validationFailed(unknown, `${unknown} is not a known argument (${known.join(', ')})`);
}

const describe = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** An integer argument as the query string or path value the endpoint parses. */
export function intArg(args: Args, name: string, required: true): string;
export function intArg(args: Args, name: string, required?: false): string | undefined;
export function intArg(args: Args, name: string, required = false): string | undefined {
  const value = args[name];
  if (value === undefined) {
    if (required) throw validationFailed(name, `${name} is required`);
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) throw validationFailed(name, `${name} must be an integer, got ${describe(value)}`);
  return String(value);
}

export function stringArg(args: Args, name: string, required: true): string;
export function stringArg(args: Args, name: string, required?: false): string | undefined;
export function stringArg(args: Args, name: string, required = false): string | undefined {
  const value = args[name];
  if (value === undefined) {
    if (required) throw validationFailed(name, `${name} is required`);
    return undefined;
  }
  if (typeof value !== 'string') throw validationFailed(name, `${name} must be a string, got ${describe(value)}`);
  return value;
}

export function boolArg(args: Args, name: string): boolean | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw validationFailed(name, `${name} must be a boolean, got ${describe(value)}`);
  return value;
}

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
 * (CONTRACT §8) but named as the argument a tool caller sent.
 */
export function idempotencyKeyArg(args: Args): string {
  const value = args[IDEMPOTENCY_ARG];
  if (value !== undefined && typeof value !== 'string') {
    throw validationFailed(IDEMPOTENCY_ARG, `${IDEMPOTENCY_ARG} must be a string, got ${describe(value)}`);
  }
  const parsed = parseIdempotencyKey(value);
  if (parsed.ok) return value as string;
  const message = parsed.message.replace(`The ${IDEMPOTENCY_HEADER} header`, `The ${IDEMPOTENCY_ARG} argument`).replace(IDEMPOTENCY_HEADER, IDEMPOTENCY_ARG);
  if (parsed.reason === 'missing') throw new DomainError('idempotency_key_required', message, IDEMPOTENCY_ARG);
  throw validationFailed(IDEMPOTENCY_ARG, message);
}
