/**
 * What the OpenAPI document says about each operation beyond the route table: its words, and the
 * valibot schemas its handler validates the query and body with (the route's own, from shared/domain,
 * never copied), its answer and the error codes it can give besides the ones every operation shares.
 * Exhaustive over `Operation`: a route added to the table does not compile until it is described.
 * (The MCP tool table reads the same schemas.)
 */
import { ListEventsQuery } from '#domain/event/list-query.ts';
import * as v from 'valibot';
import type { Operation } from '../api-routes.ts';
import type { ErrorCode } from '#domain/errors.ts';
import { ExternalIdSchema } from '#domain/validation.ts';
import { IncludeQuery } from '#domain/product/include.ts';
import { ProductPatchBody, ProductPutBody } from '#domain/product/product-write.ts';
import { ProductBatchBody } from '#domain/product/batch.ts';
import { CategoryBody, TagBody } from '#domain/product/taxonomy.ts';
import { ActionBody, PageBody } from '#domain/page/page-write.ts';
import { ORDER_REFERENCE_PATTERN } from '#domain/order/rules.ts';
import { ChecksumListQuery, ListProductsQuery } from '#domain/product/list-query.ts';
import { ListOrdersQuery } from '#domain/order/list-query.ts';
import { ListPagesQuery } from '#domain/page/list-query.ts';
import { StatusChangeBody } from '#domain/order/status-change.ts';
import { StockDeltaBody } from '#domain/product/stock.ts';
import type { ResponseBody } from './resources.ts';
import { JsonRpcRequest, JsonRpcResponse } from './json-rpc.ts';

export interface OperationDoc {
  summary: string;
  description: string;
  query?: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>;
  body?: v.GenericSchema;
  /** The body may be left out (publish/unpublish take none). */
  bodyOptional?: boolean;
  /** Named success body (components.schemas), or an inline schema. */
  response: ResponseBody | { schema: v.GenericSchema; name: string } | null;
  /** The body is not the API's JSON (JSON-RPC): its own parser answers malformed input. */
  rawBody?: boolean;
  /** Requires an Idempotency-Key header (docs/contract.md#idempotency). */
  idempotent?: boolean;
  /** Codes beyond the shared ones (auth, rate limit, body, validation, not found on a path). */
  errors?: ErrorCode[];
  /** Answers an `ETag`; with `conditional`, takes If-Match and If-None-Match too (docs/catalog-writes.md#conditional-writes). */
  etag?: 'read' | 'conditional';
  /** Success statuses other than 200 with their description. */
  otherSuccess?: Record<string, string>;
}

/** Path parameters by name, wherever a route template uses them. */
export const PATH_PARAMETERS: Record<string, { schema: v.GenericSchema; description: string }> = {
  id: {
    schema: v.pipe(v.number(), v.integer(), v.minValue(1)),
    description: 'The product id in this store (from the product list).',
  },
  reference: {
    schema: v.pipe(v.string(), v.regex(ORDER_REFERENCE_PATTERN)),
    description: 'The order reference, e.g. DEMO-1004.',
  },
  external_id: {
    schema: ExternalIdSchema,
    description: 'Your id for the record (1-128 characters of A-Z a-z 0-9 . _ : -), scoped to this API key.',
  },
};

const productWrite = ['invalid_image_url', 'unknown_reference', 'resource_busy'] satisfies ErrorCode[];

export const OPERATION_DOCS: Record<Operation, OperationDoc> = {
  listProducts: {
    summary: 'List products',
    description:
      "The store's products in ascending id order, 15 per page by default, optionally filtered by name or SKU (a Laravel-style page envelope). " +
      "A `filter[name]` needle whose candidates cannot be read within the search's read budget is refused with 422 `filter_too_broad`: use a longer needle.",
    query: ListProductsQuery,
    response: 'ProductPage',
    errors: ['filter_too_broad'],
  },
  getProduct: {
    summary: 'Get a product',
    description: 'One product by its id in this store; a non-numeric id is a 404 like any unknown id.',
    query: IncludeQuery,
    response: 'ProductDocument',
  },
  listEvents: {
    summary: "List events (the store's numbered event log)",
    description:
      "The store's events after `cursor` (a `sequence`), ascending, 50 per page by default (1-100): those of the families this key can read " +
      "(`orders:read`, `catalog:read`, `content:read`), of `types` (comma list) if given, without the key's own changes with `exclude_own=true`. " +
      'Sequences have no holes: a webhook receiver that saw 41 then 43 fetches `cursor=41`. Events are kept 30 days; a cursor whose next event is gone is 410 `cursor_expired` (re-sync). ' +
      'Follow `next_cursor` until it is null.',
    query: ListEventsQuery,
    response: 'EventList',
    errors: ['cursor_expired'],
  },
  listOrders: {
    summary: 'List orders (sync)',
    description:
      'Orders in ascending id order from `cursor`, optionally only those updated at or after `updated_since` (ISO 8601 with offset). Follow `next_cursor` until it is null.',
    query: ListOrdersQuery,
    response: 'OrderList',
  },
  setOrderStatus: {
    summary: "Change an order's status",
    description:
      'pending/paid → processing or cancelled; processing → shipped or cancelled; shipped → delivered or returned; delivered → returned. `paid` is set by the payment side only. Asking for the current status changes nothing. Each change sends an `order.status_changed` webhook.',
    body: StatusChangeBody,
    response: 'OrderDocument',
    idempotent: true,
    errors: ['invalid_transition', 'status_not_allowed', 'resource_busy'],
  },
  upsertProduct: {
    summary: 'Create or replace a product',
    description:
      'Creates the product with this external id, or replaces every write field of it (omitted fields take their defaults). Categories and tags must exist for this key.',
    query: IncludeQuery,
    body: ProductPutBody,
    response: 'MappedProductDocument',
    errors: [...productWrite, 'precondition_failed'],
    etag: 'conditional',
  },
  listChecksums: {
    summary: "List your products' checksums",
    description:
      "This key's products in external-id order after `cursor` (the previous page's `next_cursor`), each with the checksum of its write shape and `updated_at`: hash your own records the same way to find what is missing, different or extra without reading products. Eventually consistent; one Query of the key's external-id links a page (docs/catalog-writes.md#checksums). A product with external id `checksums` is read back through this list, not GET /catalog/products/checksums.",
    query: ChecksumListQuery,
    response: 'ChecksumList',
  },
  getCatalogProduct: {
    summary: 'Get a product by your external id',
    description:
      "The product this key's external id addresses, in the same mapped shape a PUT or PATCH answers (with `external_id`, `category_external_ids`, `tag_external_ids`); 404 for an external id this key has not written. Reads what the key just wrote.",
    query: IncludeQuery,
    response: 'MappedProductDocument',
    etag: 'read',
  },
  updateProduct: {
    summary: 'Update a product',
    description:
      'Changes only the supplied fields of an existing product of this key; 404 for an unknown external id (after the body is valid).',
    query: IncludeQuery,
    body: ProductPatchBody,
    response: 'MappedProductDocument',
    errors: [...productWrite, 'precondition_failed'],
    etag: 'conditional',
  },
  upsertProducts: {
    summary: 'Write 1-100 products',
    description:
      "Each item exactly as PUT (mode replace, the default) or PATCH (mode patch) would write it; one result per item in request order, and one item's error never fails the others.",
    query: IncludeQuery,
    body: ProductBatchBody,
    response: 'BatchResult',
  },
  adjustProductStock: {
    summary: "Adjust a variant's stock",
    description:
      "Adds `delta` (negative takes stock out) to one variant's quantity atomically: the first variant, or the one whose SKU is `sku`. Racing deltas are never lost; with `expected_quantity` the delta applies only if the variant holds exactly that (409 quantity_changed otherwise), and one that would leave less than 0 is 422 insufficient_stock; neither changes anything. With If-Match (the ETag this route, a read or a write answered) it applies only to that version of the product, else 412 precondition_failed, as on PATCH; the ETag is the checksum of the write shape, so it moves with the first variant's quantity but not with another variant's (use `expected_quantity` there). Answers the product with its offers and raises `product.stock_changed` (not `product.updated`).",
    body: StockDeltaBody,
    response: 'MappedProductDocument',
    idempotent: true,
    errors: ['quantity_changed', 'insufficient_stock', 'precondition_failed', 'resource_busy'],
    etag: 'conditional',
  },
  upsertCategory: {
    summary: 'Create or rename a category',
    description: 'Creates the category with this external id or renames it.',
    body: CategoryBody,
    response: 'CategoryDocument',
    errors: ['resource_busy'],
  },
  upsertTag: {
    summary: 'Create or change a tag',
    description:
      'Creates the tag with this external id or changes its value; status labels (paid, archived, published, ...) are refused.',
    body: TagBody,
    response: 'TagDocument',
    errors: ['reserved_tag_value', 'resource_busy'],
  },
  listPages: {
    summary: 'List content pages',
    description:
      "Pages and blog posts of the store in ascending id order from `cursor`, optionally of one type; another key's page shows `external_id: null`.",
    query: ListPagesQuery,
    response: 'PageList',
  },
  savePage: {
    summary: 'Save a page as draft',
    description:
      'Creates or replaces the page with this external id and leaves it a draft; the HTML body is sanitized.',
    body: PageBody,
    response: 'PageDocument',
    errors: ['slug_taken', 'precondition_failed', 'resource_busy'],
    etag: 'conditional',
  },
  publishPage: {
    summary: 'Publish a page',
    description: 'draft or unpublished → published (stamps published_at); published → no-op.',
    body: ActionBody,
    bodyOptional: true,
    response: 'PageDocument',
    idempotent: true,
    errors: ['slug_taken', 'resource_busy'],
  },
  unpublishPage: {
    summary: 'Unpublish a page',
    description:
      'published → unpublished; unpublished → no-op; a draft → 409 invalid_transition. A repeat is a no-op, so no Idempotency-Key is needed.',
    body: ActionBody,
    bodyOptional: true,
    response: 'PageDocument',
    errors: ['invalid_transition', 'resource_busy'],
  },
  mcp: {
    summary: 'MCP tool server (JSON-RPC)',
    description:
      "Model Context Protocol over Streamable HTTP, stateless, JSON answers: one JSON-RPC message per POST. Each tool stands for one operation of this API and needs that operation's ability (docs/mcp.md).",
    body: JsonRpcRequest,
    rawBody: true,
    response: { schema: JsonRpcResponse, name: 'JsonRpcResponse' },
    otherSuccess: { '202': 'A notification or response was accepted (no body).' },
  },
};
