import { problemResult } from '#http/error-status.ts';
import { isRefused } from '#domain/outcome.ts';
import { validate } from '#domain/validation.ts';
import { ChecksumListQuery } from '#domain/product/list-query.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { listProductChecksums } from '#app/product-reads.ts';

/**
 * GET /catalog/products/checksums: this key's products with the checksum of their write shape,
 * by external id from `cursor`, so an integrator finds what is missing, different or extra
 * without reading products (docs/catalog-writes.md#checksums).
 */
export const listChecksums: RouteFn = async (ctx, { principal, query }) => {
  const q = validate(ChecksumListQuery, query);
  if (isRefused(q)) return problemResult(q);
  return { body: await listProductChecksums(ctx, principal, { cursor: q.cursor, limit: Number(q.limit) }) };
};
