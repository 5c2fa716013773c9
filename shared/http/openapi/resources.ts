/**
 * The response shapes of the API as valibot schemas: the one description the OpenAPI document
 * generates its response schemas from. The mappers keep their TypeScript types; the `Same` checks
 * at the bottom make a field added to a mapper and not here (or the reverse) a compile error, and
 * the contract tests check every response the suites receive against the generated document.
 */
import { EVENT_TYPES } from '#domain/event/event.ts';
import * as v from 'valibot';
import { described as d } from '#domain/validation.ts';
import { ORDER_STATUSES } from '#domain/order/order.ts';
import type { OrderResource } from '#domain/order/events.ts';
import { PAGE_STATUSES, PAGE_TYPES, type PageResource } from '#domain/page/page.ts';
import type { ProductResource, toMappedProduct } from '#domain/product/product.ts';
import type { Category as CategoryRecord, Tag as TagRecord } from '#domain/product/taxonomy.ts';
import { ERROR_CODES } from '#domain/errors.ts';

const id = d(v.pipe(v.number(), v.integer(), v.minValue(1)), 'Numeric id, unique within the store.');
const nullable = <S extends v.GenericSchema>(schema: S) => v.nullable(schema);
const dateTime = v.pipe(v.string(), v.isoTimestamp());
const money = d(v.pipe(v.number(), v.integer()), 'Minor units of the currency (cents).');
const count = v.pipe(v.number(), v.integer(), v.minValue(0));

export const OfferProperty = v.strictObject({ name: v.string(), value: v.string() });

export const ProductOffer = v.strictObject({
  id,
  sku: nullable(v.string()),
  price: money,
  quantity: count,
  properties: v.array(OfferProperty),
});

const productFields = {
  id,
  name: v.string(),
  description: v.string(),
  sku: d(nullable(v.string()), 'SKU of the first variant.'),
  thumbnail_url: nullable(v.string()),
  quantity: d(count, 'Stock over all variants.'),
  currency_code: nullable(v.string()),
  min_price: money,
  max_price: money,
  weight: nullable(v.number()),
  length: nullable(v.number()),
  height: nullable(v.number()),
  width: nullable(v.number()),
  has_offers: d(v.boolean(), 'True when the product has more than one variant.'),
  is_archived: d(v.boolean(), 'True unless the product is active.'),
  category_id: nullable(v.number()),
  created_at: nullable(dateTime),
  updated_at: nullable(dateTime),
  offers: v.optional(d(v.array(ProductOffer), 'The variants; present only with include=offers.')),
};

export const Product = v.strictObject(productFields);

export const MappedProduct = v.strictObject({
  ...productFields,
  external_id: d(nullable(v.string()), 'Your id for the product.'),
  category_external_ids: v.array(v.string()),
  tag_external_ids: v.array(v.string()),
  checksum: d(
    v.string(),
    'SHA-256 (hex) of the RFC 8785 canonical JSON of the write shape, as this key would PUT the product now (docs/catalog-writes.md#checksums).',
  ),
});

export const Category = v.strictObject({
  id,
  external_id: v.string(),
  name: v.string(),
  created_at: dateTime,
  updated_at: dateTime,
});
export const Tag = v.strictObject({
  id,
  external_id: v.string(),
  value: v.string(),
  created_at: dateTime,
  updated_at: dateTime,
});

export const OrderItem = v.strictObject({
  product_id: nullable(v.number()),
  offer_id: nullable(v.number()),
  sku: nullable(v.string()),
  name: v.string(),
  quantity: count,
  price: money,
  total: money,
});

export const Order = v.strictObject({
  id,
  reference: v.string(),
  status: v.picklist(ORDER_STATUSES),
  currency_code: v.string(),
  customer: v.strictObject({ name: v.string(), email: v.string(), phone: nullable(v.string()) }),
  items: v.array(OrderItem),
  subtotal: money,
  shipping_total: money,
  discount_total: money,
  total: money,
  paid_total: money,
  created_at: dateTime,
  updated_at: dateTime,
});

export const Page = v.strictObject({
  id,
  external_id: d(nullable(v.string()), "Your id for the page; null on another key's page."),
  type: v.picklist(PAGE_TYPES),
  title: v.string(),
  slug: v.string(),
  body: d(v.string(), 'Sanitized HTML.'),
  status: v.picklist(PAGE_STATUSES),
  has_unpublished_changes: d(
    v.boolean(),
    'A revision saved over the published page waits for the next publish (`?version=draft` shows it).',
  ),
  published_at: d(nullable(dateTime), 'When the live version was published.'),
  created_at: dateTime,
  updated_at: dateTime,
});

export const ErrorBody = v.strictObject({
  code: v.picklist(ERROR_CODES),
  message: v.string(),
  field: d(nullable(v.string()), 'The input field at fault, e.g. `items[2].sku`; null when no one field is.'),
});

const nextCursor = d(nullable(v.pipe(v.number(), v.integer())), 'Pass as `cursor` for the next page; null: no more.');
const url = nullable(v.string());

export const ProductPage = v.strictObject({
  current_page: count,
  data: v.array(Product),
  per_page: count,
  total: count,
  from: nullable(count),
  to: nullable(count),
  last_page: count,
  path: v.string(),
  next_page_url: url,
  prev_page_url: url,
});

export const BatchResult = v.strictObject({
  data: v.array(
    v.strictObject({
      external_id: nullable(v.string()),
      status: d(
        v.pipe(v.number(), v.integer()),
        'What the single PUT/PATCH would have answered. 429 (`resource_busy`: other writes of the same product kept winning) and 503 (`service_unavailable`: the request ran out of time) wrote nothing: send the item again.',
      ),
      result: d(
        nullable(v.picklist(['created', 'updated', 'unchanged'])),
        'What the write did: `unchanged` means it changed nothing, so no event was raised; null for an item in error.',
      ),
      data: nullable(MappedProduct),
      error: nullable(ErrorBody),
    }),
  ),
});

/** The named shapes, as they appear under components.schemas. */
export const RESOURCE_SCHEMAS = {
  Product,
  ProductOffer,
  MappedProduct,
  Category,
  Tag,
  Order,
  OrderItem,
  Page,
  Error: ErrorBody,
} as const;

/** Response bodies by name, each referring to the named shapes. */
export const RESPONSE_BODIES = {
  ProductPage,
  ProductDocument: v.strictObject({ data: Product }),
  MappedProductDocument: v.strictObject({ data: MappedProduct }),
  BatchResult,
  ChecksumList: v.strictObject({
    data: v.array(
      v.strictObject({
        id,
        external_id: v.string(),
        checksum: d(v.string(), "As the product's `checksum` (docs/catalog-writes.md#checksums)."),
        updated_at: dateTime,
      }),
    ),
    next_cursor: d(nullable(v.string()), 'The `cursor` of the next page; null on the last page.'),
  }),
  CategoryDocument: v.strictObject({ data: Category }),
  TagDocument: v.strictObject({ data: Tag }),
  OrderList: v.strictObject({ data: v.array(Order), next_cursor: nextCursor }),
  EventList: v.strictObject({
    data: v.array(
      v.strictObject({
        id: v.string(),
        sequence: v.pipe(v.number(), v.integer(), v.minValue(1)),
        type: v.picklist(EVENT_TYPES),
        timestamp: v.string(),
        origin: v.nullable(
          v.object({ kind: v.picklist(['key', 'admin', 'storefront']), key_id: v.optional(v.number()) }),
        ),
        changed_fields: v.optional(
          d(
            v.nullable(v.array(v.string())),
            'On product.updated, page.*, category.upserted, tag.upserted and order.status_changed only: the write-shape names the change moved (docs/webhooks.md, "What changed"); null on such events recorded before it was.',
          ),
        ),
        data: v.record(v.string(), v.unknown()),
      }),
    ),
    next_cursor: nextCursor,
  }),
  OrderDocument: v.strictObject({ data: Order }),
  PageList: v.strictObject({ data: v.array(Page), next_cursor: nextCursor }),
  PageDocument: v.strictObject({ data: Page }),
} as const;
export type ResponseBody = keyof typeof RESPONSE_BODIES;

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>(_proof?: T) => undefined;
same<Same<v.InferOutput<typeof Product>, ProductResource>>();
same<Same<v.InferOutput<typeof MappedProduct>, ReturnType<typeof toMappedProduct>>>();
same<Same<v.InferOutput<typeof Order>, OrderResource>>();
same<Same<v.InferOutput<typeof Page>, PageResource>>();
same<Same<v.InferOutput<typeof Category>, CategoryRecord>>();
same<Same<v.InferOutput<typeof Tag>, TagRecord>>();
