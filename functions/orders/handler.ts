import { createHttpHandler, type GroupOperations } from '../../shared/http/http-handler.ts';
import { listOrders } from './routes/list-orders.ts';
import { setOrderStatus } from './routes/set-order-status.ts';

/** Orders: GET /orders (orders:read), POST /orders/{reference}/status (orders:write-status). */
export const operations = { listOrders, setOrderStatus } satisfies GroupOperations<'orders'>;

export const handler = createHttpHandler('orders', operations);
