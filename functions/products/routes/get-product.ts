import { IncludeQuery } from '../../../shared/domain/product/include.ts';
import { parse } from '../../../shared/domain/validation.ts';
import { notFound } from '../../../shared/domain/errors.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import { getProduct as readProduct } from '../../../shared/db/product.repo.ts';
import { toProductResource } from '../../../shared/domain/product/product.ts';


export const getProduct: RouteFn = async ({ principal, pathParameters, query }) => {
  const q = parse(IncludeQuery, query);
  // A non-numeric id can name no product: 404, as for any unknown id.
  const raw = pathParameters.id ?? '';
  const id = /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : undefined;
  const product = id === undefined ? undefined : await readProduct(principal.storeId, id);
  if (!product) throw notFound('product');
  return { body: { data: toProductResource(product, principal.currency, q.include === 'offers') } };
};
