import { validate } from '#domain/validation.ts';
import { isRefused } from '#domain/outcome.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { idempotent } from '#http/idempotency.ts';
import { changeOrderStatus } from '#app/orders.ts';
import { orderNotFound, referenceFromPath } from '#domain/order/rules.ts';
import { StatusChangeBody } from '#domain/order/status-change.ts';

/** POST /orders/{reference}/status under an Idempotency-Key: validation → the use case → the stored answer. */
export const setOrderStatus: RouteFn = (ctx, input) =>
  idempotent(ctx, input, {
    precheck: () => {
      const body = validate(StatusChangeBody, input.body ?? {});
      if (isRefused(body)) return body;
      const { status } = body;
      const reference = referenceFromPath(input.pathParameters.reference);
      // A reference outside the alphabet can name no order.
      if (reference === undefined) return orderNotFound();
      return { reference, status };
    },
    run: (request, { reference, status }) => changeOrderStatus(ctx, input.principal, reference, status, request),
  });
