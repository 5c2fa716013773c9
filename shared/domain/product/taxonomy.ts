/** Category and tag write shapes (docs/contract.md#products). Pure. */
import * as v from 'valibot';
import { ORDER_STATUSES } from '../order/order.ts';
import { PRODUCT_STATUSES } from './product.ts';
import { plainText } from '../text.ts';
import { skeleton } from '../confusable.ts';

/** Categories and tags: named by the calling key's external ids, numbered per store. */
export type TaxonomyKind = 'category' | 'tag';

export interface Category {
  id: number;
  external_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface Tag {
  id: number;
  external_id: string;
  value: string;
  created_at: string;
  updated_at: string;
}

/**
 * Status labels may not be tag values: a tag `paid` or `archived` would be read as a status by
 * the people and tools that look at products and orders.
 */
export const RESERVED_TAG_VALUES: ReadonlySet<string> = new Set([
  ...ORDER_STATUSES,
  ...PRODUCT_STATUSES,
  'published',
  'unpublished',
]);

/**
 * How a tag value is compared with the reserved labels: its look-alike skeleton (confusable.ts).
 * So ` Paid `, `PAID\t`, `ｐａｉｄ`, `pa\u200Bid`, `раid` (Cyrillic а), `PAİD` and `pai\u0301d` are all `paid`.
 */
export function tagComparisonForm(value: string): string {
  return skeleton(value);
}

export function isReservedTagValue(value: string): boolean {
  return RESERVED_TAG_VALUES.has(tagComparisonForm(value));
}

const label = plainText({ min: 1, max: 255 });

export const CategoryBody = v.strictObject({ name: label });

export const TagBody = v.strictObject({
  value: v.pipe(
    v.string('must be a string'),
    // Before the text rules, so that `Shipped\t` is named for what it is: a status label.
    v.check(
      (s) => !isReservedTagValue(s),
      (issue) =>
        `reserved_tag_value: ${tagComparisonForm(String(issue.input))} is a status label and cannot be a tag value`,
    ),
    label,
  ),
});
