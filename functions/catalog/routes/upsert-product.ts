import { validate, validateExternalId } from '#domain/validation.ts';
import { IncludeQuery } from '#domain/product/include.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { etag, writeCondition } from '#http/conditional.ts';
import { putProduct } from '#app/product-writes.ts';
import { toMappedProduct } from '#domain/product/product.ts';
import { preconditionFailed } from '#domain/product/checksum.ts';
import { isRefused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { ProductPutBody } from '#domain/product/product-write.ts';

/** PUT /catalog/products/{external_id}: create or replace every write field; If-Match / If-None-Match: * hold it to a version. */
export const upsertProduct: RouteFn = async (ctx, { principal, pathParameters, body, query, headers }) => {
  const externalId = validateExternalId(pathParameters);
  if (isRefused(externalId)) return problemResult(externalId);
  const q = validate(IncludeQuery, query);
  if (isRefused(q)) return problemResult(q);
  const write = validate(ProductPutBody, body ?? {});
  if (isRefused(write)) return problemResult(write);
  const condition = writeCondition(headers);
  if (isRefused(condition)) return problemResult(condition);
  const written = await putProduct(ctx, principal, externalId, write, condition);
  if (isRefused(written)) return problemResult(written);
  if (written.result === 'precondition_failed') return problemResult(preconditionFailed(written.header));
  const data = toMappedProduct(written.product, principal.currency, q.include === 'offers');
  return { body: { data }, headers: { ETag: etag(data.checksum) } };
};
