import { getDensePage, getProductsByIds } from '#db/product/repo.ts';
import { getProduct as readProduct, productByExternalId } from '#db/product/item.ts';
import { productIdsBySku } from '#db/product/index.repo.ts';
import { productIdsByName } from '#db/name-index/search.repo.ts';
import { normalizeName, type Product } from '#domain/product/product.ts';
import { notFound } from '#domain/errors.ts';

/** One page of the store's products in ascending id order, narrowed by the filters first when there are any. */
export async function listProducts(
  storeId: string,
  params: { page: number; limit: number; name?: string | undefined; sku?: string | undefined },
): Promise<{ products: Product[]; total: number }> {
  const { page, limit, sku } = params;
  // Every name contains the empty string: an empty filter[name] narrows nothing.
  const name = params.name === '' ? undefined : params.name;
  const slice = <T>(all: T[]) => all.slice((page - 1) * limit, page * limit);
  if (sku !== undefined) {
    // A SKU names one product, or a handful: read them all and check the name on them.
    const bySku = await getProductsByIds(storeId, await productIdsBySku(storeId, sku));
    const wanted = name === undefined ? undefined : normalizeName(name);
    const matches = wanted === undefined ? bySku : bySku.filter((p) => normalizeName(p.name).includes(wanted));
    return { products: slice(matches), total: matches.length };
  }
  if (name === undefined) return getDensePage(storeId, page, limit);
  const ids = await productIdsByName(storeId, name);
  return { products: await getProductsByIds(storeId, slice(ids)), total: ids.length };
}

export async function getProduct(storeId: string, id: number | undefined): Promise<Product> {
  const product = id === undefined ? undefined : await readProduct(storeId, id);
  if (!product) throw notFound('product');
  return product;
}

/** The product a key's own external id maps to (the key's write address, read back). */
export async function getProductByExternalId(
  caller: { storeId: string; keyId: number },
  externalId: string,
): Promise<Product> {
  const product = await productByExternalId(caller.storeId, caller.keyId, externalId);
  if (!product) throw notFound('product', 'external_id');
  return product;
}
