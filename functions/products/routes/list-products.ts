import * as v from 'valibot';
import { intString, parse } from '../../../shared/domain/validation.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import { getDensePage, getProductsByIds, productIdsByName, productIdsBySku } from '../../../shared/db/product.repo.ts';
import { toProductResource } from '../../../shared/domain/product/product.ts';
import { pageEnvelope } from '../../../shared/domain/pagination.ts';

// Strict: an unknown parameter is 422 (a misspelt filter would otherwise silently list everything).
const Query = v.strictObject({
  page: v.optional(intString(1, 1_000_000_000), '1'),
  limit: v.optional(intString(1, 50), '15'),
  'filter[name]': v.optional(v.pipe(v.string(), v.maxLength(255))),
  'filter[sku]': v.optional(v.pipe(v.string(), v.maxLength(64))),
  include: v.optional(v.picklist(['offers'], 'the only value is offers')),
});

export const listProducts: RouteFn = async ({ principal, query, url }) => {
  const q = parse(Query, query);
  const { page, limit } = q;
  const name = q['filter[name]'];
  const sku = q['filter[sku]'];
  const storeId = principal.storeId;

  let products;
  let total;
  if (name === undefined && sku === undefined) {
    ({ products, total } = await getDensePage(storeId, page, limit));
  } else {
    // Filters narrow to an id list first (SKU links, name index), then read only one page of products.
    let ids = sku !== undefined ? await productIdsBySku(storeId, sku) : await productIdsByName(storeId, name ?? '');
    if (sku !== undefined && name !== undefined && name !== '') {
      const byName = new Set(await productIdsByName(storeId, name));
      ids = ids.filter((id) => byName.has(id));
    }
    total = ids.length;
    products = await getProductsByIds(storeId, ids.slice((page - 1) * limit, page * limit));
  }

  const kept: Record<string, string> = {};
  for (const k of ['limit', 'filter[name]', 'filter[sku]', 'include'] as const) if (query[k] !== undefined) kept[k] = query[k];
  return {
    body: pageEnvelope({
      data: products.map((p) => toProductResource(p, principal.currency, q.include === 'offers')),
      page,
      limit,
      total,
      path: url,
      query: kept,
    }),
  };
};
