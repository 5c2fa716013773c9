import { parse } from '../../../shared/domain/validation.ts';
import { IncludeQuery } from '../../../shared/domain/product/include.ts';
import { notFound } from '../../../shared/domain/errors.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import type { Principal } from '../../../shared/domain/principal.ts';
import { resolveWriteTargets } from '../../../shared/db/product.repo.ts';
import { applyToExisting } from './upsert-product.ts';
import { toMappedProduct, type Product } from '../../../shared/domain/product/product.ts';
import { ProductPatchBody, type ProductChange } from '../../../shared/domain/product/product-write.ts';
import { assertReferencesExist, externalIdParam } from '../write-input.ts';

/**
 * Merge: only the supplied fields change, applied to the latest stored state (re-applied if a
 * concurrent write got there first). `{}` or a body equal to what is stored is a 200 that writes
 * nothing. Unknown external id of this key: 404, checked after the body is valid.
 */
export async function patchProduct(principal: Pick<Principal, 'keyId' | 'storeId'>, externalId: string, body: unknown): Promise<Product> {
  const patch = parse(ProductPatchBody, body ?? {});
  const targets = await resolveWriteTargets(principal.keyId, externalId, patch.category_external_ids, patch.tag_external_ids);
  if (targets.productId === undefined) throw notFound('product');
  assertReferencesExist(targets, patch.category_external_ids, patch.tag_external_ids);
  const change: ProductChange = { ...patch };
  if (patch.category_external_ids !== undefined) change.category_ids = targets.categoryIds;

  const product = await applyToExisting(principal.storeId, targets.productId, change);
  if (!product) throw notFound('product');
  return product;
}

export const updateProduct: RouteFn = async ({ principal, pathParameters, body, query }) => {
  const externalId = externalIdParam(pathParameters);
  const { include } = parse(IncludeQuery, query);
  const product = await patchProduct(principal, externalId, body);
  return { body: { data: toMappedProduct(product, principal.currency, include === 'offers') } };
};
