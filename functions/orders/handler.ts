import { spendWriteBudget } from '#app/write-budget.ts';
import { currentOrder } from '#app/orders.ts';
import { referenceFromPath } from '#domain/order/rules.ts';
import { createHttpHandler, type GroupOperations } from '#http/http-handler.ts';
import type { CurrentStatesOf } from '#http/dry-run.ts';
import { listOrders } from './routes/list-orders.ts';
import { setOrderStatus } from './routes/set-order-status.ts';
import { listEvents } from './routes/list-events.ts';

/**
 * Orders: GET /orders (orders:read), POST /orders/{reference}/status (orders:write-status); and the
 * store's event log, GET /events (any read ability), whose first family the order events were.
 */
export const operations = { listOrders, setOrderStatus, listEvents } satisfies GroupOperations<'orders'>;

/** What a status change addresses as stored now, for its dry run. */
export const currentStates = {
  setOrderStatus: (ctx, i) => currentOrder(ctx, i.principal, referenceFromPath(i.pathParameters.reference) ?? ''),
} satisfies CurrentStatesOf<'orders'>;

// Pure: the MCP server imports this module for its operations only, and its bundle leaves out this Lambda.
export const handler = /* @__PURE__ */ createHttpHandler('orders', operations, { spendWriteBudget, currentStates });
