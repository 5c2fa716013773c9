import type { RequestContext } from '#shared/context.ts';
import { getDensePage, getProductsByIds } from '#db/product/repo.ts';
import { getProduct as readProduct, productByExternalId } from '#db/product/item.ts';
import { productIdsBySku } from '#db/product/index.repo.ts';
import { productIdsByName, SEARCH_READ_BUDGET_RCU } from '#db/name-index/search.repo.ts';
import { normalizeName, productNotFound, type Product } from '#domain/product/product.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { productChecksumPage } from '#db/product/checksum.repo.ts';
import { productChecksum } from '#domain/product/checksum.ts';
import { settledSequence } from './product-ids.ts';

type ListParams = { page: number; limit: number; name?: string | undefined; sku?: string | undefined };
type ProductList = { products: Product[]; total: number };

/**
 * One page of the store's products in ascending id order, narrowed by the filters first when
 * there are any. The unfiltered list counts from the id sequence, first settling any id
 * reservation past its expiry at `now` (shared/app/product-ids.ts). Only a name filter can be
 * refused: one whose matches do not fit in the search's read budget (422 filter_too_broad).
 */
export async function listProducts(
  ctx: RequestContext,
  storeId: string,
  params: ListParams & { name?: undefined },
  now?: number,
): Promise<ProductList>;
export async function listProducts(
  ctx: RequestContext,
  storeId: string,
  params: ListParams,
  now?: number,
): Promise<ProductList | Refused>;
export async function listProducts(
  ctx: RequestContext,
  storeId: string,
  params: ListParams,
  now: number = Date.now(),
): Promise<ProductList | Refused> {
  const { page, limit, sku } = params;
  // Every name contains the empty string: an empty filter[name] narrows nothing.
  const name = params.name === '' ? undefined : params.name;
  const slice = <T>(all: T[]) => all.slice((page - 1) * limit, page * limit);
  if (sku !== undefined) {
    // A SKU names one product, or a handful: read them all and check the name on them.
    const bySku = await getProductsByIds(ctx, storeId, await productIdsBySku(ctx, storeId, sku));
    const wanted = name === undefined ? undefined : normalizeName(name);
    const matches = wanted === undefined ? bySku : bySku.filter((p) => normalizeName(p.name).includes(wanted));
    return { products: slice(matches), total: matches.length };
  }
  if (name === undefined) {
    const read = await getDensePage(ctx, storeId, page, limit);
    const settled = await settledSequence(ctx, storeId, read.sequence, now);
    const { products, total } =
      settled === read.sequence ? read : await getDensePage(ctx, storeId, page, limit, settled);
    return { products, total };
  }
  const ids = await productIdsByName(ctx, storeId, name);
  if (!Array.isArray(ids))
    return refused(
      'filter_too_broad',
      `filter[name] "${name}" matches too many product names to be answered within the search's read budget (${SEARCH_READ_BUDGET_RCU} read units); use a longer or rarer needle.`,
      'filter[name]',
    );
  return { products: await getProductsByIds(ctx, storeId, slice(ids)), total: ids.length };
}

/** The store's product with this id (undefined: a path id that can name none), or 404. */
export async function getProduct(
  ctx: RequestContext,
  storeId: string,
  id: number | undefined,
): Promise<Product | Refused> {
  const product = id === undefined ? undefined : await readProduct(ctx, storeId, id);
  return product ?? productNotFound();
}

/** The product a key's own external id maps to (the key's write address, read back). */
export async function getProductByExternalId(
  ctx: RequestContext,
  caller: { storeId: string; keyId: number },
  externalId: string,
): Promise<Product | Refused> {
  return (await productByExternalId(ctx, caller.storeId, caller.keyId, externalId)) ?? productNotFound('external_id');
}

/** A page of a key's products by external id, each with its checksum (docs/catalog-writes.md#checksums). */
export interface ChecksumPage {
  data: { id: number; external_id: string; checksum: string; updated_at: string }[];
  next_cursor: string | null;
}

/**
 * GET /catalog/products/checksums: the checksums the key's external-id links hold, one Query per
 * page. A link written before checksums (or before it carried the product's copy) has none: its
 * product is read and its checksum computed, so the list is complete.
 */
export async function listProductChecksums(
  ctx: RequestContext,
  caller: { storeId: string; keyId: number },
  params: { cursor?: string | undefined; limit: number },
): Promise<ChecksumPage> {
  const { entries, more } = await productChecksumPage(ctx, caller.keyId, params.cursor, params.limit);
  const older = entries.filter((e) => e.checksum === undefined || e.updated_at === undefined).map((e) => e.id);
  const read = new Map((await getProductsByIds(ctx, caller.storeId, older)).map((p) => [p.id, p]));
  const data = entries.flatMap((e) => {
    const product = read.get(e.id);
    const checksum = e.checksum ?? (product && productChecksum(product));
    const updatedAt = e.updated_at ?? product?.updated_at;
    // A link is written with its product in one transaction: a link without one is not a product of the key.
    if (checksum === undefined || updatedAt === undefined) return [];
    return [{ id: e.id, external_id: e.external_id, checksum, updated_at: updatedAt }];
  });
  const last = entries.at(-1);
  return { data, next_cursor: more && last ? last.external_id : null };
}
