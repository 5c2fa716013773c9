import { parse, externalIdParam } from '#domain/validation.ts';
import { IncludeQuery } from '#domain/product/include.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { putProduct } from '#app/product-writes.ts';
import { toMappedProduct } from '#domain/product/product.ts';
import { ProductPutBody } from '#domain/product/product-write.ts';

/** PUT /catalog/products/{external_id}: create or replace every write field. */
export const upsertProduct: RouteFn = async ({ principal, pathParameters, body, query }) => {
  const externalId = externalIdParam(pathParameters);
  const { include } = parse(IncludeQuery, query);
  const product = await putProduct(principal, externalId, parse(ProductPutBody, body ?? {}));
  return { body: { data: toMappedProduct(product, principal.currency, include === 'offers') } };
};
