import { changedFields } from '../event/changed-fields.ts';
import { toOrderResource, type Order, type OrderStatus } from './order.ts';
import {
  buildEvent,
  EVENT_RETENTION_SECONDS,
  newEventId,
  ORDER_EVENT_TYPES,
  STOREFRONT_ORIGIN,
  withChangedFields,
  type Origin,
  type StoreEvent,
} from '../event/event.ts';

export { newEventId, ORDER_EVENT_TYPES };

/**
 * Order outbox events: one per change of an order, written in the same transaction as the change
 * (order placed, payment confirmed, status moved). The webhook consumer reads them from the table
 * stream, so this shape is a contract between the two sides; the repository adds only the keys
 * and `type`. A change is exactly one event: a payment is `order.paid`, not also a status change.
 */
export const ORDER_CREATED = 'order.created';
export const ORDER_PAID = 'order.paid';
export const ORDER_STATUS_CHANGED = 'order.status_changed';

export type OrderEventType = (typeof ORDER_EVENT_TYPES)[number];

/** Outbox events are the store's event log: kept 30 days, past every webhook retry schedule (24 h). */
export const OUTBOX_EVENT_TTL_SECONDS = EVENT_RETENTION_SECONDS;

export type OrderResource = ReturnType<typeof toOrderResource>;

/** What `data` holds: the order right after the change, and for a status move where it came from. */
export type OrderEventData =
  | { order: OrderResource }
  | { order: OrderResource; previous_status: OrderStatus; status: OrderStatus };

/** The webhook body (docs/contract.md#webhooks). */
export interface OrderEventPayload {
  type: OrderEventType;
  timestamp: string;
  changed_fields?: string[];
  data: OrderEventData;
}

export interface OrderEvent extends StoreEvent {
  event_type: OrderEventType;
  payload: OrderEventPayload;
}

function buildOrderEvent(
  type: OrderEventType,
  order: Order,
  data: OrderEventData,
  at: Date,
  eventId: string,
  origin: Origin,
): OrderEvent {
  return buildEvent(type, order.store_id, data, at, origin, eventId) as OrderEvent;
}

const asDate = (now: Date | string) => (typeof now === 'string' ? new Date(now) : now);

/**
 * `order` is the order after the change; `now` is the moment of the change (its updated_at).
 * `changed_fields` is `["status"]`, the one field of the status route's body (a no-op move raises
 * no event).
 */
export function buildStatusChangedEvent(
  order: Order,
  previousStatus: OrderStatus,
  now: Date | string = new Date(),
  eventId: string = newEventId(),
  origin: Origin = { kind: 'admin' },
): OrderEvent {
  const data = { order: toOrderResource(order), previous_status: previousStatus, status: order.status };
  const changed = changedFields(ORDER_STATUS_CHANGED, { status: previousStatus }, { status: order.status });
  return withChangedFields(buildOrderEvent(ORDER_STATUS_CHANGED, order, data, asDate(now), eventId, origin), changed);
}

/** The payment side confirmed the payment: `order` is paid, `previousStatus` what it was before. */
export function buildPaidEvent(order: Order, previousStatus: OrderStatus, eventId: string = newEventId()): OrderEvent {
  const data = { order: toOrderResource(order), previous_status: previousStatus, status: order.status };
  return buildOrderEvent(ORDER_PAID, order, data, new Date(order.updated_at), eventId, STOREFRONT_ORIGIN);
}

/** The storefront placed `order` (pending, or already paid); the moment is its created_at. */
export function buildCreatedEvent(order: Order, eventId: string = newEventId()): OrderEvent {
  return buildOrderEvent(
    ORDER_CREATED,
    order,
    { order: toOrderResource(order) },
    new Date(order.created_at),
    eventId,
    STOREFRONT_ORIGIN,
  );
}
