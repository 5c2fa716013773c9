/**
 * The webhook bodies (docs/webhooks.md) as valibot schemas, one per event type: the `webhooks`
 * section of the OpenAPI document is generated from this table, and it is exhaustive over the
 * domain's event types (a new type without its body does not compile). Every event body is the
 * `GET /events` item `{id, sequence, type, timestamp, origin, changed_fields?, data}`, signed with the Standard
 * Webhooks headers; a ping is `{type, timestamp, data}`.
 */
import * as v from 'valibot';
import { described as d } from '#domain/validation.ts';
import { ORDER_STATUSES } from '#domain/order/order.ts';
import type { OrderEventData } from '#domain/order/events.ts';
import { CHANGED_FIELD_NAMES, EVENT_TYPES, type EventType, type TrackedEventType } from '#domain/event/event.ts';
import { Category, Order, Page, Product, ProductOffer, Tag } from './resources.ts';

const timestamp = (of: string) => d(v.pipe(v.string(), v.isoTimestamp()), `The moment of the change (${of}).`);

const Origin = d(
  v.variant('kind', [
    v.strictObject({ kind: v.literal('key'), key_id: v.pipe(v.number(), v.integer()) }),
    v.strictObject({ kind: v.literal('admin') }),
    v.strictObject({ kind: v.literal('storefront') }),
  ]),
  'Who caused the change: a key, the store’s admin, or the storefront (a shopper, the payment side). Null on events recorded before provenance was.',
);

/** The fields every logged event's body starts with. */
const head = <T extends EventType>(type: T, of: string) => ({
  id: d(
    v.pipe(v.string(), v.regex(/^evt_[0-9a-f]{32}$/)),
    'The event id, also the `webhook-id` header and the `id` in GET /events: the same on every retry, deduplicate on it.',
  ),
  sequence: d(
    v.pipe(v.number(), v.integer(), v.minValue(1)),
    'The event’s number in the store’s log (1, 2, 3, … without holes; also the `webhook-sequence` header): a jump past the last one you hold names the events to fetch from GET /events.',
  ),
  type: v.literal(type),
  timestamp: timestamp(of),
  origin: v.nullable(Origin),
});

/** The body of a logged event: the same fields and values as its `GET /events` item. */
const envelope = <T extends EventType, S extends v.GenericSchema>(type: T, data: S, of: string) =>
  v.strictObject({ ...head(type, of), data });

/** ...of a type that carries `changed_fields` (docs/webhooks.md, "What changed"). */
const trackedEnvelope = <T extends TrackedEventType, S extends v.GenericSchema>(type: T, data: S, of: string) =>
  v.strictObject({
    ...head(type, of),
    changed_fields: d(
      v.nullable(v.array(v.picklist(CHANGED_FIELD_NAMES[type]))),
      `The write-shape names this change moved (of: ${CHANGED_FIELD_NAMES[type].join(', ')}); a \`types\` entry \`${type}:name,…\` passes the events that moved at least one of those it names. Null on events recorded before it was.`,
    ),
    data,
  });

const status = v.picklist(ORDER_STATUSES);
const ownId = (what: string) =>
  v.optional(
    d(v.string(), `Your external id for the ${what}: present only in the bodies sent to the key that owns it.`),
  );
const ProductData = v.strictObject({
  product: v.strictObject({ ...Product.entries, offers: v.array(ProductOffer), external_id: ownId('product') }),
});
const StockChangedData = v.strictObject({
  ...ProductData.entries,
  variant_id: d(v.pipe(v.number(), v.integer()), 'The id of the variant whose quantity moved.'),
  sku: d(v.nullable(v.string()), 'Its SKU (null when it has none).'),
  delta: d(v.pipe(v.number(), v.integer()), 'The signed amount the delta added (never 0).'),
  quantity: d(v.pipe(v.number(), v.integer(), v.minValue(0)), 'The variant’s quantity after it.'),
});
const CategoryData = v.strictObject({
  category: v.strictObject({ ...Category.entries, external_id: ownId('category') }),
});
const TagData = v.strictObject({ tag: v.strictObject({ ...Tag.entries, external_id: ownId('tag') }) });
const PageData = v.strictObject({ page: Page });

export interface WebhookEventDoc {
  summary: string;
  description: string;
  body: v.GenericSchema;
}

const ORDER_AT = 'the order’s updated_at';

export const EVENT_BODIES = {
  'order.status_changed': {
    summary: 'An order changed status',
    description:
      'One per status change made through POST /orders/{reference}/status. `data.order` is the order right after the change; `status` equals `data.order.status`.',
    body: trackedEnvelope(
      'order.status_changed',
      v.strictObject({ order: Order, previous_status: status, status }),
      ORDER_AT,
    ),
  },
  'order.created': {
    summary: 'An order was placed',
    description: 'The storefront placed an order; `data.order` is the order as placed.',
    body: envelope('order.created', v.strictObject({ order: Order }), ORDER_AT),
  },
  'order.paid': {
    summary: 'An order was paid',
    description:
      'The payment side confirmed payment; `data.order` is the order after it (status paid, paid_total = total).',
    body: envelope(
      'order.paid',
      v.strictObject({ order: Order, previous_status: status, status: v.literal('paid') }),
      ORDER_AT,
    ),
  },
  'product.created': {
    summary: 'A product was created',
    description:
      'A key (PUT or batch) or the admin created a product; `data.product` is its read shape with its offers (currency_code null: the store’s currency is that of GET /products). Needs catalog:read.',
    body: envelope('product.created', ProductData, 'the product’s updated_at'),
  },
  'product.updated': {
    summary: 'A product changed',
    description:
      'A write changed a product (a write that changes nothing raises no event); `data.product` is the product after it, as in product.created. Needs catalog:read.',
    body: trackedEnvelope('product.updated', ProductData, 'the product’s updated_at'),
  },
  'product.stock_changed': {
    summary: 'A variant’s stock moved',
    description:
      'A stock delta (POST /catalog/products/{external_id}/stock, MCP adjust_stock) moved one variant’s quantity; it raises this event and no product.updated, so stock-only changes can be subscribed to or left out. `data.product` is the product after it, as in product.updated. Needs catalog:read.',
    body: envelope('product.stock_changed', StockChangedData, 'the product’s updated_at'),
  },
  'category.upserted': {
    summary: 'A category was created or renamed',
    description: '`data.category` is the category after the write. Needs catalog:read.',
    body: trackedEnvelope('category.upserted', CategoryData, 'the category’s updated_at'),
  },
  'tag.upserted': {
    summary: 'A tag was created or changed',
    description: '`data.tag` is the tag after the write. Needs catalog:read.',
    body: trackedEnvelope('tag.upserted', TagData, 'the tag’s updated_at'),
  },
  'page.published': {
    summary: 'A page was published',
    description:
      'A page or its unpublished revision went live; `data.page` is the page as published. Needs content:read.',
    body: trackedEnvelope('page.published', PageData, 'the page’s updated_at'),
  },
  'page.unpublished': {
    summary: 'A page was taken offline',
    description: '`data.page` is the page after it (status unpublished). Needs content:read.',
    body: trackedEnvelope('page.unpublished', PageData, 'the page’s updated_at'),
  },
} as const satisfies Record<EventType, WebhookEventDoc>;

export const WEBHOOK_EVENTS = {
  ...EVENT_BODIES,
  'webhook.ping': {
    summary: 'A test delivery',
    description:
      'Sent on request (admin `webhooks ping`) to check that the URL receives and verifies deliveries; acknowledge it like any event. It is no event of the log: no id in the body, no sequence.',
    body: v.strictObject({
      type: v.literal('webhook.ping'),
      timestamp: timestamp('the ping'),
      data: v.strictObject({
        key_id: v.pipe(v.number(), v.integer()),
        store_id: v.string(),
        events: d(
          v.array(v.string()),
          `The event types the key subscribes to (of: ${EVENT_TYPES.join(', ')}), each with the fields it filters on after a colon when it does (\`product.updated:price,name\`).`,
        ),
      }),
    }),
  },
} as const satisfies Record<string, WebhookEventDoc>;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_proof?: T) => undefined;
type DataOf<E extends keyof typeof WEBHOOK_EVENTS> = v.InferOutput<(typeof WEBHOOK_EVENTS)[E]['body']>['data'];
same<Same<DataOf<'order.status_changed'> | DataOf<'order.created'>, OrderEventData>>();
same<DataOf<'order.paid'> extends OrderEventData ? true : false>();
