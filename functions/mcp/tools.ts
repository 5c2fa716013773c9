import * as v from 'valibot';
import type { KeyedOperation } from '#http/api-routes.ts';
import { described, ExternalIdSchema, integerIn } from '#domain/validation.ts';
import { CURSOR, DEFAULT_LIMIT, PAGE_LIMIT, PAGE_NUMBER } from '#domain/pagination.ts';
import { ProductPatchBody, ProductPutBody } from '#domain/product/product-write.ts';
import { MAX_BATCH_ITEMS, ProductBatchBody } from '#domain/product/batch.ts';
import { CategoryBody, TagBody } from '#domain/product/taxonomy.ts';
import { StockDeltaBody } from '#domain/product/stock.ts';
import { PageBody } from '#domain/page/page-write.ts';
import { ORDER_REFERENCE_PATTERN } from '#domain/order/rules.ts';
import { CHECKSUM_PAGE_DEFAULT, CHECKSUM_PAGE_MAX, ListProductsQuery } from '#domain/product/list-query.ts';
import { ListPagesQuery } from '#domain/page/list-query.ts';
import { SETTABLE_STATUSES, StatusChangeBody } from '#domain/order/status-change.ts';
import { pathSegment, rest, type Args } from './args.ts';
import type { ToolDefinition, ToolRequest, ToolSpec } from './tool-spec.ts';
import { define } from './define-tool.ts';
import type { ToolOperation } from './operations.ts';
import { ANY_OF_SPECS } from './event-tools.ts';

const externalId = (what: string) =>
  described(
    ExternalIdSchema,
    `Your id for the ${what} (1-128 characters of A-Z a-z 0-9 . _ : -), scoped to this API key.`,
  );
const limit = v.optional(described(PAGE_LIMIT, 'Page size.'), DEFAULT_LIMIT);
const cursor = v.optional(
  described(CURSOR, 'Return records with an id greater than this (the previous next_cursor).'),
  0,
);
const includeOffers = v.optional(described(v.boolean(), 'Add the variants (offers) to each product.'));

/** A write by external id: `external_id` goes into the path, every other argument is the body. */
const byExternalId = (args: Args): ToolRequest => ({
  pathParameters: { external_id: pathSegment(String(args.external_id)) },
  body: rest(args, ['external_id']),
});

/** Query parameters from arguments, leaving out the ones not given (the endpoint's defaults apply). */
function query(entries: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(entries).flatMap(([k, value]) => (value === undefined ? [] : [[k, String(value)]])),
  );
}

const orderReference = described(v.pipe(v.string(), v.regex(ORDER_REFERENCE_PATTERN)), 'The order reference.');
const STATUS_MOVES =
  'Allowed moves: pending or paid → processing or cancelled; processing → shipped or cancelled; shipped → delivered or returned; delivered → returned. paid is set by the payment side only. Asking for the current status changes nothing.';

/**
 * The MCP tools (docs/contract.md#mcp), one per keyed operation of the route table — exhaustive, so an
 * endpoint without its tool does not compile. The ability, the route function and the
 * idempotency scope come from the operation's endpoint, so a tool is exactly the HTTP call it
 * stands for. Arguments are validated with schemas composed from the endpoint's own valibot
 * schemas (the JSON Schema a client sees is generated from them), then translated into the
 * request the endpoint gets — the raw arguments, so that the endpoint validates and fingerprints
 * exactly what an HTTP client would have sent.
 */
const SPECS: Record<KeyedOperation, ToolSpec> = {
  listProducts: {
    name: 'list_products',
    output: 'ProductPage',
    title: 'List products',
    description:
      "Lists the store's products in ascending id order, 15 per page by default, optionally filtered. Returns the page envelope of GET /products (data, current_page, last_page, total, ...).",
    args: v.strictObject({
      page: v.optional(described(PAGE_NUMBER, 'Page number, starting at 1.'), 1),
      limit,
      filter_name: described(ListProductsQuery.entries['filter[name]'], 'Case-insensitive part of the product name.'),
      filter_sku: described(ListProductsQuery.entries['filter[sku]'], 'Exact SKU of any variant.'),
      include_offers: includeOffers,
    }),
    request: (a) => ({
      query: query({
        page: a.page,
        limit: a.limit,
        'filter[name]': a.filter_name,
        'filter[sku]': a.filter_sku,
        include: a.include_offers ? 'offers' : undefined,
      }),
    }),
    fieldNames: { 'filter[name]': 'filter_name', 'filter[sku]': 'filter_sku', include: 'include_offers' },
  },
  getProduct: {
    name: 'get_product',
    output: 'ProductDocument',
    title: 'Get a product',
    description:
      'One product by its id in this store (the id from list_products, not an external id). Returns {data: Product}.',
    args: v.strictObject({ id: integerId(), include_offers: includeOffers }),
    request: (a) => ({
      pathParameters: { id: String(a.id) },
      query: query({ include: a.include_offers ? 'offers' : undefined }),
    }),
    fieldNames: { include: 'include_offers' },
  },
  getCatalogProduct: {
    name: 'get_product_by_external_id',
    output: 'MappedProductDocument',
    title: 'Get a product by your external id',
    description:
      'The product your external id addresses (the id you wrote it with), as upsert_product answers it. Returns {data: mapped product}; not found for an external id this key has not written.',
    args: v.strictObject({ external_id: externalId('product'), include_offers: includeOffers }),
    request: (a) => ({
      pathParameters: { external_id: pathSegment(String(a.external_id)) },
      query: query({ include: a.include_offers ? 'offers' : undefined }),
    }),
    fieldNames: { include: 'include_offers' },
  },
  listChecksums: {
    name: 'list_product_checksums',
    output: 'ChecksumList',
    title: "List your products' checksums",
    description:
      "Your products (this key's external ids) in external-id order, each with the SHA-256 checksum of its write shape and updated_at, up to 1000 a page: compare with your own records to find missing, different or extra products. Returns {data: [{id, external_id, checksum, updated_at}], next_cursor}.",
    args: v.strictObject({
      cursor: v.optional(described(ExternalIdSchema, "The previous page's next_cursor (an external id).")),
      limit: v.optional(described(integerIn(1, CHECKSUM_PAGE_MAX), 'Page size.'), CHECKSUM_PAGE_DEFAULT),
    }),
    request: (a) => ({ query: query({ cursor: a.cursor, limit: a.limit }) }),
  },
  upsertProduct: {
    name: 'upsert_product',
    output: 'MappedProductDocument',
    title: 'Create or replace a product',
    description:
      'Creates the product with this external id, or replaces every write field of it (omitted fields take their defaults). Categories and tags must exist for this key. Returns {data: mapped product}.',
    args: v.strictObject({ external_id: externalId('product'), ...ProductPutBody.entries }),
    request: byExternalId,
  },
  updateProduct: {
    name: 'update_product',
    output: 'MappedProductDocument',
    title: 'Update a product',
    description:
      'Changes only the supplied fields of an existing product of this key (not found otherwise). Returns {data: mapped product}.',
    args: v.strictObject({ external_id: externalId('product'), ...ProductPatchBody.entries }),
    request: byExternalId,
  },
  upsertProducts: {
    name: 'upsert_products',
    output: 'BatchResult',
    title: 'Create, replace or update many products',
    description:
      "Writes 1-100 products in one call, each exactly as upsert_product (mode replace, the default) or update_product (mode patch) would. Returns {data: [{external_id, status, result, data, error}]} in the order of items (result: created, updated, or unchanged when the item changed nothing); one item's error never fails the others.",
    args: ProductBatchBody,
    // Each item is checked later by the single write's schema (one bad item fails only itself); the client still sees its fields.
    shown: v.strictObject({
      items: v.pipe(
        v.array(v.strictObject({ external_id: externalId('product'), ...ProductPatchBody.entries })),
        v.minLength(1),
        v.maxLength(MAX_BATCH_ITEMS),
        v.description(
          `1-${MAX_BATCH_ITEMS} products, each its external_id and the write fields; in mode replace name and price are required, as for upsert_product.`,
        ),
      ),
      mode: ProductBatchBody.entries.mode,
    }),
    request: (args) => ({ body: args }),
  },
  adjustProductStock: {
    name: 'adjust_stock',
    output: 'MappedProductDocument',
    title: "Adjust a variant's stock",
    description:
      "Adds delta (negative takes stock out) to one variant's quantity atomically: the first variant, or the one with this sku. Concurrent adjustments are never lost. With expected_quantity it applies only if the variant holds exactly that (quantity_changed otherwise); a result below 0 is insufficient_stock; neither changes anything. Use it for stock movements instead of update_product's quantity, which overwrites. Returns {data: mapped product with offers}.",
    args: v.strictObject({ external_id: externalId('product'), ...StockDeltaBody.entries }),
    idempotent: true,
    request: (a) => ({
      pathParameters: { external_id: pathSegment(String(a.external_id)) },
      body: rest(a, ['external_id']),
    }),
  },
  upsertCategory: {
    name: 'upsert_category',
    output: 'CategoryDocument',
    title: 'Create or rename a category',
    description: 'Creates the category with this external id or renames it. Returns {data: category}.',
    args: v.strictObject({ external_id: externalId('category'), ...CategoryBody.entries }),
    request: byExternalId,
  },
  upsertTag: {
    name: 'upsert_tag',
    output: 'TagDocument',
    title: 'Create or rename a tag',
    description:
      'Creates the tag with this external id or changes its value. Status labels (paid, archived, published, ...) are refused. Returns {data: tag}.',
    args: v.strictObject({ external_id: externalId('tag'), ...TagBody.entries }),
    request: byExternalId,
  },
  listOrders: {
    name: 'list_orders',
    output: 'OrderList',
    title: 'List orders',
    description:
      'Lists orders in ascending id order from a cursor, optionally only those updated at or after a time. Returns {data: [orders], next_cursor}; pass next_cursor as cursor for the next page (null: no more).',
    args: v.strictObject({
      cursor,
      limit,
      updated_since: v.optional(described(v.string(), 'ISO 8601 date-time with offset, e.g. 2026-11-22T01:24:20Z.')),
    }),
    request: (a) => ({ query: query({ cursor: a.cursor, limit: a.limit, updated_since: a.updated_since }) }),
  },
  setOrderStatus: {
    name: 'set_order_status',
    output: 'OrderDocument',
    title: "Change an order's status",
    description: `Moves an order to a new status. ${STATUS_MOVES} Returns {data: order}.`,
    args: v.strictObject({ reference: orderReference, status: StatusChangeBody.entries.status }),
    // The validating schema refuses paid with its own code (status_not_allowed) before the enum check, which JSON Schema cannot show.
    shown: v.strictObject({
      reference: orderReference,
      status: described(v.picklist(SETTABLE_STATUSES), `The new status. ${STATUS_MOVES}`),
    }),
    idempotent: true,
    request: (a) => ({ pathParameters: { reference: pathSegment(String(a.reference)) }, body: rest(a, ['reference']) }),
  },
  listPages: {
    name: 'list_pages',
    output: 'PageList',
    title: 'List content pages',
    description:
      'Lists pages and blog posts in ascending id order from a cursor, each as its live version unless version is draft (then the latest saved revision). Returns {data: [pages], next_cursor}.',
    args: v.strictObject({
      type: described(ListPagesQuery.entries.type, 'Only this type.'),
      version: described(
        ListPagesQuery.entries.version,
        'live (default): what the storefront shows; draft: the latest saved revision.',
      ),
      cursor,
      limit,
    }),
    request: (a) => ({ query: query({ type: a.type, version: a.version, cursor: a.cursor, limit: a.limit }) }),
  },
  savePage: {
    name: 'save_page',
    output: 'PageDocument',
    title: 'Save a page as draft',
    description:
      'Creates or replaces the page with this external id. Saving never publishes: a new, draft or unpublished page is a draft afterwards; a published page stays live unchanged and holds the save as its unpublished revision (has_unpublished_changes) until publish_page. The HTML body is sanitized. Returns {data: page} showing the saved version.',
    args: v.strictObject({ external_id: externalId('page'), ...PageBody.entries }),
    request: byExternalId,
  },
  publishPage: {
    name: 'publish_page',
    output: 'PageDocument',
    title: 'Publish a page',
    description:
      'Publishes a draft or unpublished page, or the unpublished revision of a published page; a published page without changes stays as it is. Returns {data: page}.',
    args: v.strictObject({ external_id: externalId('page') }),
    idempotent: true,
    request: (a) => ({ pathParameters: { external_id: pathSegment(String(a.external_id)) } }),
  },
  unpublishPage: {
    name: 'unpublish_page',
    output: 'PageDocument',
    title: 'Unpublish a page',
    description:
      'Takes a published page offline (status unpublished); a draft cannot be unpublished. Returns {data: page}.',
    args: v.strictObject({ external_id: externalId('page') }),
    request: (a) => ({ pathParameters: { external_id: pathSegment(String(a.external_id)) } }),
  },
};

function integerId() {
  return v.pipe(v.number('must be an integer'), v.integer('must be an integer'), v.minValue(1, 'must be at least 1'));
}

export const TOOLS: readonly ToolDefinition[] = (
  Object.entries({ ...SPECS, ...ANY_OF_SPECS }) as [ToolOperation, ToolSpec][]
).map(([operation, spec]) => define(operation, spec));
