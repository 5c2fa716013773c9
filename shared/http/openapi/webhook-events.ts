/**
 * The webhook bodies (docs/contract.md#webhooks) as valibot schemas, one per event type: the `webhooks`
 * section of the OpenAPI document is generated from this table. Every body is
 * `{type, timestamp, data}`, signed with the Standard Webhooks headers.
 */
import * as v from 'valibot';
import { ORDER_STATUSES } from '#domain/order/order.ts';
import { ORDER_EVENT_TYPES } from '#domain/order/events.ts';
import type { OrderEventData } from '#domain/order/events.ts';
import { Order } from './resources.ts';

const envelope = <T extends string, S extends v.GenericSchema>(type: T, data: S) =>
  v.strictObject({
    type: v.literal(type),
    timestamp: v.pipe(
      v.string(),
      v.isoTimestamp(),
      v.description('The moment of the change (the order’s updated_at).'),
    ),
    data,
  });

const status = v.picklist(ORDER_STATUSES);

export interface WebhookEventDoc {
  summary: string;
  description: string;
  body: v.GenericSchema;
}

export const WEBHOOK_EVENTS = {
  'order.status_changed': {
    summary: 'An order changed status',
    description:
      'One per status change made through POST /orders/{reference}/status. `data.order` is the order right after the change; `status` equals `data.order.status`.',
    body: envelope('order.status_changed', v.strictObject({ order: Order, previous_status: status, status })),
  },
  'order.created': {
    summary: 'An order was placed',
    description: 'The storefront placed an order; `data.order` is the order as placed.',
    body: envelope('order.created', v.strictObject({ order: Order })),
  },
  'order.paid': {
    summary: 'An order was paid',
    description:
      'The payment side confirmed payment; `data.order` is the order after it (status paid, paid_total = total).',
    body: envelope('order.paid', v.strictObject({ order: Order, previous_status: status, status: v.literal('paid') })),
  },
  'webhook.ping': {
    summary: 'A test delivery',
    description:
      'Sent on request (admin `webhooks ping`) to check that the URL receives and verifies deliveries; acknowledge it like any event.',
    body: envelope(
      'webhook.ping',
      v.strictObject({
        key_id: v.pipe(v.number(), v.integer()),
        store_id: v.string(),
        events: v.array(v.picklist(ORDER_EVENT_TYPES)),
      }),
    ),
  },
} as const satisfies Record<string, WebhookEventDoc>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_proof?: T) => undefined;
type DataOf<E extends keyof typeof WEBHOOK_EVENTS> = v.InferOutput<(typeof WEBHOOK_EVENTS)[E]['body']>['data'];
same<Same<DataOf<'order.status_changed'> | DataOf<'order.created'>, OrderEventData>>();
same<DataOf<'order.paid'> extends OrderEventData ? true : false>();
