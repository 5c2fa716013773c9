import { createHash } from 'node:crypto';

/**
 * Idempotency (docs/contract.md#idempotency) as pure rules: the header's value, the request's fingerprint and the
 * clocks of a record. The storage lives in shared/db/idempotency/repo.ts, the HTTP flow in
 * shared/http/idempotency.ts.
 */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
/** How long a finished request's response is replayed. */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/**
 * How long an `in_progress` record holds its key. Only the version before the folded commit wrote
 * such records (a claim before the work); one of them still blocks its key (409) until its lease
 * ends, then a retry with the same body takes the key over. Once every such record is past its
 * 24 h TTL, this and the `in_progress` branch of classifyExisting can go.
 */
export const IDEMPOTENCY_LEASE_MS = 30_000;

export type IdempotencyKeyResult =
  | { ok: true; key: string }
  | { ok: false; reason: 'missing' | 'invalid'; message: string };

const VISIBLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The header value, bare (`abc`) or as an RFC 8941 sf-string (`"abc"`, with `\"` and `\\`
 * escapes); both spell the same key. Printable ASCII only: that is all an sf-string can carry
 * and all a sort key needs.
 */
export function parseIdempotencyKey(raw: string | undefined): IdempotencyKeyResult {
  const value = (raw ?? '').replace(/^[ \t]+|[ \t]+$/g, '');
  if (value === '') return { ok: false, reason: 'missing', message: `The ${IDEMPOTENCY_HEADER} header is required.` };
  let key: string;
  if (value.startsWith('"')) {
    const unquoted = unquoteSfString(value);
    if (unquoted === undefined) {
      return {
        ok: false,
        reason: 'invalid',
        message: `${IDEMPOTENCY_HEADER} is not a valid quoted string (RFC 8941).`,
      };
    }
    if (unquoted === '')
      return { ok: false, reason: 'missing', message: `The ${IDEMPOTENCY_HEADER} header is required.` };
    key = unquoted;
  } else {
    if (!VISIBLE_ASCII.test(value)) {
      return { ok: false, reason: 'invalid', message: `${IDEMPOTENCY_HEADER} must be printable ASCII.` };
    }
    key = value;
  }
  if (key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    return {
      ok: false,
      reason: 'invalid',
      message: `${IDEMPOTENCY_HEADER} must be at most ${IDEMPOTENCY_KEY_MAX_LENGTH} characters.`,
    };
  }
  return { ok: true, key };
}

function unquoteSfString(value: string): string | undefined {
  let out = '';
  for (let i = 1; i < value.length; i++) {
    const c = value[i] as string;
    if (c === '\\') {
      const next = value[i + 1];
      if (next !== '"' && next !== '\\') return undefined;
      out += next;
      i++;
    } else if (c === '"') {
      return i === value.length - 1 ? out : undefined;
    } else if (c < '\x20' || c > '\x7e') {
      return undefined;
    } else {
      out += c;
    }
  }
  return undefined; // no closing quote
}

/**
 * JSON with object keys sorted at every level: the same request always has the same text.
 * Iterative (an explicit stack of pending tokens), so no body depth can overflow the call stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Each entry is either a value still to write or a literal piece of punctuation.
  const stack: ({ value: unknown } | string)[] = [{ value }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next === 'string') {
      out.push(next);
      continue;
    }
    const v = next.value;
    if (v === undefined) out.push('null');
    else if (v === null || typeof v !== 'object') out.push(JSON.stringify(v));
    else if (Array.isArray(v)) {
      const parts: ({ value: unknown } | string)[] = ['['];
      v.forEach((item, i) => {
        if (i) parts.push(',');
        parts.push({ value: item });
      });
      parts.push(']');
      pushReversed(stack, parts);
    } else {
      const entries = Object.entries(v as Record<string, unknown>)
        .filter(([, x]) => x !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const parts: ({ value: unknown } | string)[] = ['{'];
      for (const [i, [k, x]] of entries.entries()) parts.push(`${i ? ',' : ''}${JSON.stringify(k)}:`, { value: x });
      parts.push('}');
      pushReversed(stack, parts);
    }
  }
  return out.join('');
}

/** A loop, not `push(...items)`: a 1 MiB array has more elements than a call may take arguments. */
function pushReversed<T>(stack: T[], items: T[]): void {
  for (let i = items.length - 1; i >= 0; i--) stack.push(items[i] as T);
}

/**
 * What "the same request" means for a key that is already scoped to key + method + path: the
 * same body, up to whitespace and key order.
 */
export function requestFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('base64url');
}
