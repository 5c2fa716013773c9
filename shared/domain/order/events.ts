import { createHash } from 'node:crypto';
import { toOrderResource, type Order, type OrderStatus } from './order.ts';
import {
  buildEvent,
  changedFields,
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
  follows: string | null;
}

/**
 * The id of the event an order's version raised: derived from the store, the order and its
 * `updated_at` (every order write moves it, and raises one event), in the format of every event
 * id. So the next change knows its predecessor's id without reading it (`follows`), and a change
 * cannot raise two events: a second outbox item with the same id is refused by its condition.
 */
export function orderEventId(order: Pick<Order, 'store_id' | 'id' | 'updated_at'>): string {
  const digest = createHash('sha256').update(`${order.store_id}\n${order.id}\n${order.updated_at}`).digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

function buildOrderEvent(
  type: OrderEventType,
  order: Order,
  data: OrderEventData,
  at: Date,
  follows: string | null,
  origin: Origin,
): OrderEvent {
  return { ...buildEvent(type, order.store_id, data, at, origin, orderEventId(order)), follows } as OrderEvent;
}

const asDate = (now: Date | string) => (typeof now === 'string' ? new Date(now) : now);

/**
 * `order` is the order after the change, `previous` the version it was decided from; `now` is the
 * moment of the change (its updated_at). `changed_fields` is `["status"]`, the one field of the
 * status route's body (a no-op move raises no event).
 */
export function buildStatusChangedEvent(
  order: Order,
  previous: Order,
  now: Date | string = new Date(),
  origin: Origin = { kind: 'admin' },
): OrderEvent {
  const data = { order: toOrderResource(order), previous_status: previous.status, status: order.status };
  const changed = changedFields(ORDER_STATUS_CHANGED, { status: previous.status }, { status: order.status });
  const event = buildOrderEvent(ORDER_STATUS_CHANGED, order, data, asDate(now), orderEventId(previous), origin);
  return withChangedFields(event, changed);
}

/** The payment side confirmed the payment: `order` is paid, `previous` the version before. */
export function buildPaidEvent(order: Order, previous: Order): OrderEvent {
  const data = { order: toOrderResource(order), previous_status: previous.status, status: order.status };
  return buildOrderEvent(
    ORDER_PAID,
    order,
    data,
    new Date(order.updated_at),
    orderEventId(previous),
    STOREFRONT_ORIGIN,
  );
}

/** The storefront placed `order` (pending, or already paid); the moment is its created_at. */
export function buildCreatedEvent(order: Order): OrderEvent {
  return buildOrderEvent(
    ORDER_CREATED,
    order,
    { order: toOrderResource(order) },
    new Date(order.created_at),
    null,
    STOREFRONT_ORIGIN,
  );
}
