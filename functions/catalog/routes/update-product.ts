import { validate, validateExternalId } from '#domain/validation.ts';
import { IncludeQuery } from '#domain/product/include.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { etag, writeCondition } from '#http/conditional.ts';
import { patchProduct } from '#app/product-writes.ts';
import { toMappedProduct } from '#domain/product/product.ts';
import { preconditionFailed } from '#domain/product/checksum.ts';
import { isRefused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { ProductPatchBody } from '#domain/product/product-write.ts';

/** PATCH /catalog/products/{external_id}: only the supplied fields change; 404 (after the body is valid) for an unknown external id; If-Match holds it to a version. */
export const updateProduct: RouteFn = async (ctx, { principal, pathParameters, body, query, headers }) => {
  const externalId = validateExternalId(pathParameters);
  if (isRefused(externalId)) return problemResult(externalId);
  const q = validate(IncludeQuery, query);
  if (isRefused(q)) return problemResult(q);
  const patch = validate(ProductPatchBody, body ?? {});
  if (isRefused(patch)) return problemResult(patch);
  const condition = writeCondition(headers);
  if (isRefused(condition)) return problemResult(condition);
  const written = await patchProduct(ctx, principal, externalId, patch, condition);
  if (isRefused(written)) return problemResult(written);
  if (written.result === 'precondition_failed') return problemResult(preconditionFailed(written.header));
  const data = toMappedProduct(written.product, principal.currency, q.include === 'offers');
  return { body: { data }, headers: { ETag: etag(data.checksum) } };
};
