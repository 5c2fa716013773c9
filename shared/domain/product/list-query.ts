import * as v from 'valibot';
import { ExternalIdSchema, fromQuery, integerIn } from '../validation.ts';
import { PAGE_LIMIT, DEFAULT_LIMIT, PAGE_NUMBER } from '../pagination.ts';

/**
 * GET /products's query, as the route validates it and the API reference documents it.
 * Strict: an unknown parameter is 422 (a misspelt filter would otherwise silently list everything).
 */
export const ListProductsQuery = v.strictObject({
  page: v.optional(fromQuery(PAGE_NUMBER), '1'),
  limit: v.optional(fromQuery(PAGE_LIMIT), String(DEFAULT_LIMIT)),
  'filter[name]': v.optional(v.pipe(v.string(), v.maxLength(255))),
  'filter[sku]': v.optional(v.pipe(v.string(), v.maxLength(64))),
  include: v.optional(v.picklist(['offers'], 'the only value is offers')),
});

export const CHECKSUM_PAGE_DEFAULT = 500;
export const CHECKSUM_PAGE_MAX = 1000;

/**
 * GET /catalog/products/checksums's query: `cursor` is the last external id of the previous page
 * (its `next_cursor`), the key's products follow in external-id order. Strict, as above.
 */
export const ChecksumListQuery = v.strictObject({
  cursor: v.optional(ExternalIdSchema),
  limit: v.optional(fromQuery(integerIn(1, CHECKSUM_PAGE_MAX)), String(CHECKSUM_PAGE_DEFAULT)),
});
