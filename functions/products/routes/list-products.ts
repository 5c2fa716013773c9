import * as v from 'valibot';
import { fromQuery, parse } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { listProducts as listProductsOfStore } from '#app/product-reads.ts';
import { toProductResource } from '#domain/product/product.ts';
import { pageEnvelope, PAGE_LIMIT, DEFAULT_LIMIT, PAGE_NUMBER } from '#domain/pagination.ts';

// Strict: an unknown parameter is 422 (a misspelt filter would otherwise silently list everything).
export const ListProductsQuery = v.strictObject({
  page: v.optional(fromQuery(PAGE_NUMBER), '1'),
  limit: v.optional(fromQuery(PAGE_LIMIT), String(DEFAULT_LIMIT)),
  'filter[name]': v.optional(v.pipe(v.string(), v.maxLength(255))),
  'filter[sku]': v.optional(v.pipe(v.string(), v.maxLength(64))),
  include: v.optional(v.picklist(['offers'], 'the only value is offers')),
});

export const listProducts: RouteFn = async ({ principal, query, url }) => {
  const q = parse(ListProductsQuery, query);
  const { page, limit } = q;
  const name = q['filter[name]'];
  const sku = q['filter[sku]'];
  const storeId = principal.storeId;

  const { products, total } = await listProductsOfStore(storeId, { page, limit, name, sku });

  const kept: Record<string, string> = {};
  for (const k of ['limit', 'filter[name]', 'filter[sku]', 'include'] as const)
    if (query[k] !== undefined) kept[k] = query[k];
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
