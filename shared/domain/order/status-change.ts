import * as v from 'valibot';
import { ORDER_STATUSES } from './order.ts';

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
    v.picklist(SETTABLE_STATUSES, `must be one of ${SETTABLE_STATUSES.join(', ')}`),
  ),
});
