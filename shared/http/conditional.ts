import { refused, type Refused } from '#domain/outcome.ts';
import type { WriteCondition } from '#domain/product/checksum.ts';

/**
 * Conditional writes (RFC 9110 §13.1, docs/catalog-writes.md#conditional-writes): the ETag of a
 * product is its checksum, of a page the checksum of its draft, quoted (a strong tag). If-Match
 * takes `*` or a list of strong tags (a weak `W/"…"` tag never matches a strong comparison);
 * If-None-Match only `*` (create only). Anything else is 422 naming the header.
 */
export const etag = (checksum: string): string => `"${checksum}"`;

const TAG = /^(W\/)?"([\x21\x23-\x7e]*)"$/;

/** The strong tags of an If-Match list; undefined when a part is no entity tag. */
function strongTags(header: string): string[] | undefined {
  const strong: string[] = [];
  for (const part of header.split(',')) {
    const match = TAG.exec(part.trim());
    if (!match) return undefined;
    // A weak tag never matches: it is kept out, so an If-Match of only weak tags matches nothing.
    if (!match[1]) strong.push(match[2] as string);
  }
  return strong;
}

/**
 * The condition headers a request sent, as sent: part of what an Idempotency-Key stands for on a
 * conditional route (shared/http/idempotency.ts), so a retry of the same key with another
 * condition is not answered with the first condition's outcome.
 */
export function conditionHeaders(headers: Record<string, string>): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const name of ['if-match', 'if-none-match'])
    if (headers[name] !== undefined) sent[name] = headers[name] as string;
  return sent;
}

/**
 * The write's condition from its (lower-cased) request headers; an empty one when neither is sent,
 * a refusal naming the header when one cannot be read.
 */
export function writeCondition(headers: Record<string, string>): WriteCondition | Refused {
  const ifMatch = headers['if-match'];
  const ifNoneMatch = headers['if-none-match'];
  const condition: WriteCondition = {};
  if (ifMatch !== undefined) {
    const tags = ifMatch.trim() === '*' ? '*' : strongTags(ifMatch);
    if (tags === undefined)
      return refused(
        'validation_failed',
        'If-Match must be * or a list of quoted entity tags, e.g. "…checksum…"',
        'If-Match',
      );
    condition.ifMatch = tags;
  }
  if (ifNoneMatch !== undefined) {
    if (ifNoneMatch.trim() !== '*')
      return refused('validation_failed', 'If-None-Match must be * (create only)', 'If-None-Match');
    condition.createOnly = true;
  }
  return condition;
}
