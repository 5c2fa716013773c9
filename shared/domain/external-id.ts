import * as v from 'valibot';

/**
 * The caller's id for a product, category, tag or page (docs/contract.md#limits). The alphabet is what
 * every CRM's ids fit in and what needs no escaping in a URL path or a sort key.
 */
export const EXTERNAL_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export const EXTERNAL_ID_RULE = '1-128 characters of A-Z a-z 0-9 . _ : -';

export const ExternalIdSchema = v.pipe(v.string(), v.regex(EXTERNAL_ID_PATTERN, `must be ${EXTERNAL_ID_RULE}`));

export function isExternalId(value: unknown): value is string {
  return typeof value === 'string' && EXTERNAL_ID_PATTERN.test(value);
}

/**
 * API Gateway REST hands path parameters over as the client encoded them, the local gateway
 * decodes them. `%` is outside the alphabet, so one more decode can never turn a valid id into
 * a different valid one; it only lets `a%3Ab` (what encodeURIComponent makes of `a:b`) through.
 */
export function externalIdFromPath(raw: string | undefined): string | undefined {
  let value = raw ?? '';
  if (value.includes('%')) {
    try {
      value = decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return isExternalId(value) ? value : undefined;
}
