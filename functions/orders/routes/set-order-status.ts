import * as v from 'valibot';
import { parse } from '#domain/validation.ts';
import { notFound } from '#domain/errors.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { idempotent } from '#http/idempotency.ts';
import { changeOrderStatus } from '#app/orders.ts';
import { ORDER_STATUSES, type OrderStatus } from '#domain/order/order.ts';
import { referenceFromPath } from '#domain/order/rules.ts';

export const SETTABLE_STATUSES = ORDER_STATUSES.filter((s) => s !== 'paid');

export const StatusChangeBody = v.strictObject({
  status: v.pipe(
    v.string('must be a string'),
    v.check(
      (s) => s !== 'paid',
      'status_not_allowed: paid is set by the payment side only and cannot be set through this API',
    ),
    // An action, not a picklist schema: JSON Schema conversion stops a request body's pipe at a second schema,
    // and the OpenAPI document and the generated clients would then type status as a bare string.
    v.values(SETTABLE_STATUSES, `must be one of ${SETTABLE_STATUSES.join(', ')}`),
    v.transform((s) => s as OrderStatus),
  ),
});

/** POST /orders/{reference}/status under an Idempotency-Key: validation → the use case → the stored answer. */
export const setOrderStatus: RouteFn = (input) =>
  idempotent(input, {
    precheck: () => {
      const { status } = parse(StatusChangeBody, input.body ?? {});
      const reference = referenceFromPath(input.pathParameters.reference);
      // A reference outside the alphabet can name no order.
      if (reference === undefined) throw notFound('order');
      return { reference, status };
    },
    run: async (session, { reference, status }) => ({
      body: await changeOrderStatus(input.principal, reference, status, session),
    }),
  });
