import { isRefused } from '#domain/outcome.ts';
import { validate } from '#domain/validation.ts';
import { IncludeQuery } from '#domain/product/include.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { problemResult, statusOf } from '#http/error-status.ts';
import { upsertProductBatch } from '#app/product-batch.ts';
import { toMappedProduct } from '#domain/product/product.ts';
import { ProductBatchBody, repeatedExternalId } from '#domain/product/batch.ts';

/**
 * POST /catalog/products/batch: 1-100 product writes in one request (one unit of the key's
 * allowance). 200 with one result per item in request order: `status` is what the single
 * PUT/PATCH would have answered, `result` what the write did (`created`, `updated`, or
 * `unchanged`: it changed nothing and raised no event; null for an item in error), `data` its
 * product, `error` its `{code, message, field}`.
 */
export const upsertProductBatchRoute: RouteFn = async (ctx, { principal, body, query }) => {
  const q = validate(IncludeQuery, query);
  if (isRefused(q)) return problemResult(q);
  const batch = validate(ProductBatchBody, body ?? {});
  if (isRefused(batch)) return problemResult(batch);
  const { items, mode } = batch;
  const repeated = repeatedExternalId(items);
  if (repeated) return problemResult(repeated);
  const outcomes = await upsertProductBatch(ctx, principal, items, mode);
  return {
    body: {
      data: outcomes.map((o) =>
        o.ok
          ? {
              external_id: o.external_id,
              status: 200,
              result: o.result,
              data: toMappedProduct(o.product, principal.currency, q.include === 'offers'),
              error: null,
            }
          : { external_id: o.external_id, status: statusOf(o.error.code), result: null, data: null, error: o.error },
      ),
    },
  };
};
