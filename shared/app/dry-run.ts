import { productByExternalId } from '#db/product-refs.repo.ts';
import { readTaxonomy, type TaxonomyKind } from '#db/taxonomy.repo.ts';
import { readPageByExternalId } from '#db/page.repo.ts';
import { readOrderByReference } from '#db/order.repo.ts';
import { withoutWrites } from '#db/dry-run.ts';
import { toMappedProduct } from '#domain/product/product.ts';
import { toPageResource } from '#domain/page/page.ts';
import { toOrderResource } from '#domain/order/order.ts';
import type { Caller } from '#domain/principal.ts';

/**
 * What a dry run needs below HTTP (docs/api.md#dry-runs): running a write with every write held
 * back, and the current state of what it addresses, in the shape its answer has, to tell
 * would_create, would_update (which fields) and unchanged apart. Each reader answers undefined
 * when the record does not exist yet.
 */
export { withoutWrites };

export async function currentMappedProduct(
  caller: Caller & { currency: string | null },
  externalId: string,
  includeOffers: boolean,
) {
  const product = await productByExternalId(caller.storeId, caller.keyId, externalId);
  return product && toMappedProduct(product, caller.currency, includeOffers);
}

export const currentTaxonomy = (kind: TaxonomyKind, caller: Caller, externalId: string) =>
  readTaxonomy(kind, caller.keyId, externalId);

/** `draft`: as a save answers it (the saved version); otherwise as publish and unpublish do. */
export async function currentPage(caller: Caller, externalId: string, draft: boolean) {
  const { page } = await readPageByExternalId(caller, externalId);
  if (!page) return undefined;
  return draft ? toPageResource(page, caller.keyId, 'draft') : toPageResource(page);
}

export async function currentOrder(caller: Caller, reference: string) {
  const { order } = await readOrderByReference(caller.storeId, reference);
  return order && toOrderResource(order);
}
