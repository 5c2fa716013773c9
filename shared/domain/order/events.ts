import { randomUUID } from 'node:crypto';
import { toOrderResource, type Order, type OrderStatus } from './order.ts';

/**
 * The `order.status_changed` outbox event: one per status change, written in the same
 * transaction as the change. The webhook consumer reads it from the table stream, so this shape
 * is a contract between the two sides; the repository adds only the keys and `type`.
 */
export const ORDER_STATUS_CHANGED = 'order.status_changed';

/** Outbox events outlive every webhook retry schedule (24 h) with room to spare. */
export const OUTBOX_EVENT_TTL_SECONDS = 7 * 24 * 60 * 60;

export type OrderResource = ReturnType<typeof toOrderResource>;

/** The webhook body (CONTRACT §10). */
export interface OrderStatusChangedPayload {
  type: typeof ORDER_STATUS_CHANGED;
  timestamp: string;
  data: { order: OrderResource; previous_status: OrderStatus; status: OrderStatus };
}

export interface OrderStatusChangedEvent {
  event_id: string;
  event_type: typeof ORDER_STATUS_CHANGED;
  store_id: string;
  created_at: string;
  /** Epoch seconds. */
  ttl: number;
  payload: OrderStatusChangedPayload;
}

export const newEventId = () => `evt_${randomUUID().replace(/-/g, '')}`;

/** `order` is the order after the change; `now` is the moment of the change (its updated_at). */
export function buildStatusChangedEvent(
  order: Order,
  previousStatus: OrderStatus,
  now: Date | string = new Date(),
  eventId: string = newEventId(),
): OrderStatusChangedEvent {
  const at = typeof now === 'string' ? new Date(now) : now;
  const createdAt = at.toISOString();
  return {
    event_id: eventId,
    event_type: ORDER_STATUS_CHANGED,
    store_id: order.store_id,
    created_at: createdAt,
    ttl: Math.floor(at.getTime() / 1000) + OUTBOX_EVENT_TTL_SECONDS,
    payload: {
      type: ORDER_STATUS_CHANGED,
      timestamp: createdAt,
      data: { order: toOrderResource(order), previous_status: previousStatus, status: order.status },
    },
  };
}
