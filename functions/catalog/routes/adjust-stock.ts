import { parse, externalIdParam } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { idempotent } from '#http/idempotency.ts';
import { etag } from '#http/conditional.ts';
import { adjustStock } from '#app/stock.ts';
import { StockDeltaBody } from '#domain/product/stock.ts';

/**
 * POST /catalog/products/{external_id}/stock under an Idempotency-Key: validation → the use case →
 * the stored answer, with the ETag of the product it shows (a replay's too: the first answer's).
 */
export const adjustProductStock: RouteFn = async (input) => {
  const result = await idempotent(input, {
    precheck: () => ({
      externalId: externalIdParam(input.pathParameters),
      delta: parse(StockDeltaBody, input.body ?? {}),
    }),
    run: (request, { externalId, delta }) => adjustStock(input.principal, externalId, delta, request),
  });
  const checksum = (result.body as { data?: { checksum?: unknown } }).data?.checksum;
  if ((result.status ?? 200) !== 200 || typeof checksum !== 'string') return result;
  return { ...result, headers: { ...result.headers, ETag: etag(checksum) } };
};
