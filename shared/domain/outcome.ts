import type { ErrorCode } from './errors.ts';

/**
 * The codes no caller can cause: the platform's faults (a dependency down or past the request's
 * deadline, a bug, API Gateway's own answers). These may travel as thrown DomainErrors; every
 * other code is an outcome of the caller's request and belongs in a use case's return value
 * (the ratchet that holds the line: test/unit/pipeline-ratchets.test.ts).
 */
export const FAULT_CODES = [
  'internal_error',
  'service_unavailable',
  'bad_gateway',
  'gateway_timeout',
] as const satisfies readonly ErrorCode[];

export type FaultCode = (typeof FAULT_CODES)[number];

/** Not found, conflict, precondition failed, invalid, over budget, busy, rate limited, … */
export type CallerCode = Exclude<ErrorCode, FaultCode>;

export const isFault = (code: ErrorCode): code is FaultCode => (FAULT_CODES as readonly string[]).includes(code);

/**
 * An outcome the caller caused, as a value: tagged by its code, so a `switch (outcome.code)`
 * narrows. How each surface answers it (status, Retry-After) is the outcome table's:
 * shared/http/error-status.ts.
 */
export type Refused = {
  [C in CallerCode]: {
    kind: 'refused';
    code: C;
    message: string;
    /** The input at fault, as the caller named it (`tag_external_ids[2]`, `If-Match`), or null. */
    field: string | null;
    /** When a retry can succeed, after how many seconds (a limit that resets, a record in use). */
    retryAfterSeconds?: number;
  };
}[CallerCode];

export const refused = <C extends CallerCode>(
  code: C,
  message: string,
  field: string | null = null,
  retryAfterSeconds?: number,
): Refused =>
  ({
    kind: 'refused',
    code,
    message,
    field,
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  }) as Refused;

export const isRefused = (value: unknown): value is Refused =>
  typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'refused';
