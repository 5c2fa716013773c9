import { validate, validateExternalId } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { idempotent } from '#http/idempotency.ts';
import { conditionHeaders, etag, writeCondition } from '#http/conditional.ts';
import { adjustStock } from '#app/stock.ts';
import { preconditionFailed } from '#domain/product/checksum.ts';
import { StockDeltaBody } from '#domain/product/stock.ts';
import { isRefused } from '#domain/outcome.ts';

/**
 * POST /catalog/products/{external_id}/stock under an Idempotency-Key: validation → the use case →
 * the stored answer, with the ETag of the product it shows (a replay's too: the first answer's).
 * If-Match holds it to a version as on PATCH; its 412 is the request's stored answer like any
 * refusal, and the condition is part of what the Idempotency-Key stands for (the same key with
 * another If-Match is a reused key).
 */
export const adjustProductStock: RouteFn = async (ctx, input) => {
  const result = await idempotent(ctx, input, {
    precheck: () => {
      const externalId = validateExternalId(input.pathParameters);
      if (isRefused(externalId)) return externalId;
      const delta = validate(StockDeltaBody, input.body ?? {});
      if (isRefused(delta)) return delta;
      const condition = writeCondition(input.headers);
      if (isRefused(condition)) return condition;
      return { externalId, delta, condition };
    },
    run: async (request, { externalId, delta, condition }) => {
      const outcome = await adjustStock(ctx, input.principal, externalId, delta, request, condition);
      return outcome.kind === 'precondition_failed' ? preconditionFailed(outcome.header) : outcome;
    },
    fingerprinted: conditionHeaders(input.headers),
  });
  const checksum = (result.body as { data?: { checksum?: unknown } }).data?.checksum;
  if ((result.status ?? 200) !== 200 || typeof checksum !== 'string') return result;
  return { ...result, headers: { ...result.headers, ETag: etag(checksum) } };
};
