import { parse, externalIdParam } from '#domain/validation.ts';
import { IncludeQuery } from '#domain/product/include.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { patchProduct } from '#app/product-writes.ts';
import { toMappedProduct } from '#domain/product/product.ts';
import { ProductPatchBody } from '#domain/product/product-write.ts';

/** PATCH /catalog/products/{external_id}: only the supplied fields change; 404 (after the body is valid) for an unknown external id. */
export const updateProduct: RouteFn = async ({ principal, pathParameters, body, query }) => {
  const externalId = externalIdParam(pathParameters);
  const { include } = parse(IncludeQuery, query);
  const product = await patchProduct(principal, externalId, parse(ProductPatchBody, body ?? {}));
  return { body: { data: toMappedProduct(product, principal.currency, include === 'offers') } };
};
