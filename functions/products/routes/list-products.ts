import * as v from 'valibot';
import { intString, parse } from '../../../shared/http/validate.ts';
import { AppError } from '../../../shared/http/app-error.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import { getDensePage, getProductsByIds, productIdsByName, productIdsBySku } from '../../../shared/db/product.repo.ts';
import { toProductResource } from '../../../shared/domain/product/product.ts';
import { pageEnvelope } from '../../../shared/domain/pagination.ts';

const Query = v.object({
  page: v.optional(intString(1, 1_000_000_000), '1'),
  limit: v.optional(intString(1, 50), '15'),
  'filter[name]': v.optional(v.pipe(v.string(), v.maxLength(255))),
  'filter[sku]': v.optional(v.pipe(v.string(), v.maxLength(64))),
  include: v.optional(v.picklist(['offers'], 'the only value is offers')),
});

export const listProducts: RouteFn = async ({ principal, query, url }) => {
  const unknownFilter = Object.keys(query).find((k) => k.startsWith('filter[') && k !== 'filter[name]' && k !== 'filter[sku]');
  if (unknownFilter) throw new AppError(422, 'validation_failed', `${unknownFilter} is not a known filter (filter[name], filter[sku])`, unknownFilter);
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
