import { validate, validateExternalId } from '#domain/validation.ts';
import { IncludeQuery } from '#domain/product/include.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult } from '#http/error-status.ts';
import { isRefused } from '#domain/outcome.ts';
import { etag } from '#http/conditional.ts';
import { getProductByExternalId } from '#app/product-reads.ts';
import { toMappedProduct } from '#domain/product/product.ts';

/**
 * GET /catalog/products/{external_id}: the mapped product this key's external id addresses, as a
 * PUT or PATCH answers it, so a syncing client can read back by its own id; 404 for an external id
 * this key never wrote (another key's ids are not this key's).
 */
export const getCatalogProduct: RouteFn = async (ctx, { principal, pathParameters, query }) => {
  const externalId = validateExternalId(pathParameters);
  if (isRefused(externalId)) return problemResult(externalId);
  const q = validate(IncludeQuery, query);
  if (isRefused(q)) return problemResult(q);
  const product = await getProductByExternalId(ctx, principal, externalId);
  if (isRefused(product)) return problemResult(product);
  const data = toMappedProduct(product, principal.currency, q.include === 'offers');
  // The version an If-Match of a later PUT or PATCH names (docs/catalog-writes.md#conditional-writes).
  return { body: { data }, headers: { ETag: etag(data.checksum) } };
};
