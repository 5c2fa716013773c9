/** Category and tag write shapes (CONTRACT §6). Pure. */
import * as v from 'valibot';
import { ORDER_STATUSES } from '../order/order.ts';
import { PRODUCT_STATUSES } from './product.ts';

/**
 * Status labels may not be tag values: a tag `paid` or `archived` would be read as a status by
 * the people and tools that look at products and orders.
 */
export const RESERVED_TAG_VALUES: ReadonlySet<string> = new Set([...ORDER_STATUSES, ...PRODUCT_STATUSES, 'published', 'unpublished']);

/**
 * How a tag value is compared with the reserved labels: compatibility-normalized (full-width
 * letters fold to ASCII), invisible format characters (zero-width space, BOM, soft hyphen)
 * dropped, surrounding whitespace trimmed, lower-cased. So ` Paid `, `PAID\t`, `ｐａｉｄ` and
 * `pa\u200Bid` are all `paid`.
 */
export function tagComparisonForm(value: string): string {
  return value.normalize('NFKC').replace(/\p{Cf}/gu, '').trim().toLowerCase();
}

export function isReservedTagValue(value: string): boolean {
  return RESERVED_TAG_VALUES.has(tagComparisonForm(value));
}

const codePoints = (s: string) => [...s].length;

const label = v.pipe(
  v.string('must be a string'),
  v.check((s) => s.trim() !== '', 'must not be blank'),
  v.check((s) => codePoints(s) <= 255, 'must be at most 255 characters'),
);

export const CategoryBody = v.strictObject({ name: label });

export const TagBody = v.strictObject({
  value: v.pipe(
    label,
    v.check(
      (s) => !isReservedTagValue(s),
      (issue) => `reserved_tag_value: ${tagComparisonForm(String(issue.input))} is a status label and cannot be a tag value`,
    ),
  ),
});
