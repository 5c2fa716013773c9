import { parse, externalIdParam } from '#domain/validation.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { idempotent } from '#http/idempotency.ts';
import { adjustStock } from '#app/stock.ts';
import { StockDeltaBody } from '#domain/product/stock.ts';

/** POST /catalog/products/{external_id}/stock under an Idempotency-Key: validation → the use case → the stored answer. */
export const adjustProductStock: RouteFn = (input) =>
  idempotent(input, {
    precheck: () => ({
      externalId: externalIdParam(input.pathParameters),
      delta: parse(StockDeltaBody, input.body ?? {}),
    }),
    run: (request, { externalId, delta }) => adjustStock(input.principal, externalId, delta, request),
  });
