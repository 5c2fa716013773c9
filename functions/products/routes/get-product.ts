import { IncludeQuery } from '#domain/product/include.ts';
import { validate } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult } from '#http/error-status.ts';
import { isRefused } from '#domain/outcome.ts';
import { getProduct as readProduct } from '#app/product-reads.ts';
import { toProductResource } from '#domain/product/product.ts';

/** GET /products/{id}: a non-numeric id can name no product, so it is a 404 like any unknown id. */
export const getProduct: RouteFn = async (ctx, { principal, pathParameters, query }) => {
  const q = validate(IncludeQuery, query);
  if (isRefused(q)) return problemResult(q);
  const raw = pathParameters.id ?? '';
  const product = await readProduct(ctx, principal.storeId, /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : undefined);
  if (isRefused(product)) return problemResult(product);
  return { body: { data: toProductResource(product, principal.currency, q.include === 'offers') } };
};
