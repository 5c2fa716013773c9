import * as v from 'valibot';
import { isExternalId } from '../validation.ts';
import { refused, type Refused } from '../outcome.ts';

/** At most this many products per batch request: one request of the key's allowance, one Lambda run. */
export const MAX_BATCH_ITEMS = 100;

export const BATCH_MODES = ['replace', 'patch'] as const;
export type BatchMode = (typeof BATCH_MODES)[number];

/**
 * The batch envelope (docs/contract.md#products). Items are checked one by one later, each with the single
 * write's schema, so that one bad item fails only itself; what is checked here fails the whole
 * request: the shape of the envelope, the item count and the mode.
 */
export const ProductBatchBody = v.strictObject({
  items: v.pipe(
    v.array(v.unknown(), 'must be an array of products'),
    v.minLength(1, 'must hold at least 1 product'),
    v.maxLength(MAX_BATCH_ITEMS, `must hold at most ${MAX_BATCH_ITEMS} products`),
    v.description(
      `1-${MAX_BATCH_ITEMS} products, each with its external_id and the write fields of PUT (replace) or PATCH (patch).`,
    ),
  ),
  mode: v.optional(
    v.pipe(
      v.picklist(BATCH_MODES, `must be one of ${BATCH_MODES.join(', ')}`),
      v.description(
        'replace (default): each item is a full PUT; patch: each item changes only the fields it supplies of an existing product.',
      ),
    ),
    'replace',
  ),
});

/**
 * A batch may not name one external id twice: which of the two would win is unknowable to the
 * caller, so the whole request is refused, naming the second occurrence (undefined: none repeats).
 */
export function repeatedExternalId(items: readonly unknown[]): Refused | undefined {
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    const xid = externalIdOf(item);
    if (xid === undefined) continue;
    if (seen.has(xid))
      return refused(
        'validation_failed',
        `items[${i}].external_id repeats ${xid}; each product may appear once per batch`,
        `items[${i}].external_id`,
      );
    seen.add(xid);
  }
  return undefined;
}

/** The item's external id when it is a valid one, for the result entry and the distinctness check. */
export function externalIdOf(item: unknown): string | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  const xid = (item as Record<string, unknown>).external_id;
  return isExternalId(xid) ? xid : undefined;
}
