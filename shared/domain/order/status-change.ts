import * as v from 'valibot';
import { ORDER_STATUSES, type OrderStatus } from './order.ts';

/** The statuses a caller may set: `paid` comes from the payment side only. */
export const SETTABLE_STATUSES = ORDER_STATUSES.filter((s) => s !== 'paid');

/** POST /orders/{reference}/status's body, as the route and the MCP tool validate it and the API reference documents it. */
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
