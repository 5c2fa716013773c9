import { parse } from '../../../shared/domain/validation.ts';
import { IncludeQuery } from '../../../shared/domain/product/include.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import type { Principal } from '../../../shared/domain/principal.ts';
import {
  ExternalIdTakenError,
  insertProduct,
  modifyProduct,
  productIdForExternalId,
  reserveOfferId,
  resolveWriteTargets,
} from '../../../shared/db/product.repo.ts';
import { toMappedProduct, type Product } from '../../../shared/domain/product/product.ts';
import {
  applyProductChange,
  needsNewOffer,
  newProductDraft,
  ProductPutBody,
  type ProductChange,
} from '../../../shared/domain/product/product-write.ts';
import { assertReferencesExist, externalIdParam, nowIso } from '../write-input.ts';

/**
 * Idempotent upsert: the external id of this key always addresses the same product. The first
 * PUT inserts (the insert transaction's guard on the external-id map makes racing first PUTs
 * create exactly one product; the losers replace it instead), any later one replaces every
 * write field; a PUT that changes nothing writes nothing.
 */
export async function putProduct(principal: Pick<Principal, 'keyId' | 'storeId'>, externalId: string, body: unknown): Promise<Product> {
  const write = parse(ProductPutBody, body ?? {});
  const targets = await resolveWriteTargets(principal.keyId, externalId, write.category_external_ids, write.tag_external_ids);
  assertReferencesExist(targets, write.category_external_ids, write.tag_external_ids);
  const change = { ...write, category_ids: targets.categoryIds };

  let id = targets.productId;
  if (id === undefined) {
    const draft = newProductDraft(change, { storeId: principal.storeId, keyId: principal.keyId, externalId }, nowIso());
    try {
      return await insertProduct(draft);
    } catch (err) {
      if (!(err instanceof ExternalIdTakenError)) throw err;
      id = err.productId ?? (await productIdForExternalId(principal.keyId, externalId));
      if (id === undefined) throw err;
    }
  }
  return replaceExisting(principal.storeId, id, change);
}

/** Applies a write to the latest state of product `id` (PUT and PATCH alike); undefined if it is gone. */
export function applyToExisting(storeId: string, id: number, change: ProductChange): Promise<Product | undefined> {
  return modifyProduct(storeId, id, async (current) =>
    applyProductChange(current, change, nowIso(), needsNewOffer(current, change) ? await reserveOfferId(storeId) : undefined),
  );
}

async function replaceExisting(storeId: string, id: number, change: ProductChange): Promise<Product> {
  const product = await applyToExisting(storeId, id, change);
  // The external-id map and its product are written in one transaction and never deleted.
  if (!product) throw new Error(`external id maps to missing product ${id}`);
  return product;
}

export const upsertProduct: RouteFn = async ({ principal, pathParameters, body, query }) => {
  const externalId = externalIdParam(pathParameters);
  const { include } = parse(IncludeQuery, query);
  const product = await putProduct(principal, externalId, body);
  return { body: { data: toMappedProduct(product, principal.currency, include === 'offers') } };
};
