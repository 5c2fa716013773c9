import { validate } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult } from '#http/error-status.ts';
import { isRefused } from '#domain/outcome.ts';
import { listProducts as listProductsOfStore } from '#app/product-reads.ts';
import { toProductResource } from '#domain/product/product.ts';
import { pageEnvelope } from '#domain/pagination.ts';
import { ListProductsQuery } from '#domain/product/list-query.ts';

export const listProducts: RouteFn = async (ctx, { principal, query, url }) => {
  const q = validate(ListProductsQuery, query);
  if (isRefused(q)) return problemResult(q);
  const { page, limit } = q;
  const list = await listProductsOfStore(ctx, principal.storeId, {
    page,
    limit,
    name: q['filter[name]'],
    sku: q['filter[sku]'],
  });
  if (isRefused(list)) return problemResult(list);

  const kept: Record<string, string> = {};
  for (const k of ['limit', 'filter[name]', 'filter[sku]', 'include'] as const)
    if (query[k] !== undefined) kept[k] = query[k];
  return {
    body: pageEnvelope({
      data: list.products.map((p) => toProductResource(p, principal.currency, q.include === 'offers')),
      page,
      limit,
      total: list.total,
      path: url,
      query: kept,
    }),
  };
};
