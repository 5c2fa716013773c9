import type { ApiRoute } from '../../shared/http/api-routes.ts';
import { EXTERNAL_ID_PATTERN } from '../../shared/domain/external-id.ts';
import { ORDER_STATUSES } from '../../shared/domain/order/order.ts';
import { PRODUCT_STATUSES } from '../../shared/domain/product/product.ts';
import { MAX_LINKS, MAX_PRICE } from '../../shared/domain/product/product-write.ts';
import { ORDER_REFERENCE_PATTERN } from '../../shared/domain/order/rules.ts';
import { PAGE_TYPES } from '../../shared/domain/page/page.ts';
import { SLUG_MAX, SLUG_PATTERN, TITLE_MAX } from '../../shared/domain/page/page-write.ts';
import { boolArg, IDEMPOTENCY_ARG, idempotencyKeyArg, intArg, onlyKnown, pathSegment, rest, stringArg, type Args } from './args.ts';

/**
 * The MCP tools (CONTRACT §11), one per endpoint. A tool names its endpoint by method and path;
 * the ability, the route function and the idempotency scope come from that endpoint, so a tool
 * is exactly the HTTP call it stands for. `toRequest` only translates typed arguments into the
 * request the endpoint would get; every rule beyond JSON types stays in the route function.
 */
export interface ToolRequest {
  /** As API Gateway passes them: still URL-encoded. */
  pathParameters?: Record<string, string>;
  query?: Record<string, string>;
  body?: Args;
  /** Sent as the Idempotency-Key header. */
  idempotencyKey?: string;
}

export interface JsonSchemaObject {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
  additionalProperties: false;
  [k: string]: unknown;
}

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  method: ApiRoute['method'];
  path: string;
  inputSchema: JsonSchemaObject;
  toRequest: (args: Args) => ToolRequest;
  /** Route error fields that a tool caller knows under another name (`filter[name]` → `filter_name`). */
  fieldNames?: Record<string, string>;
}

const externalId = (what: string) => ({
  type: 'string',
  pattern: EXTERNAL_ID_PATTERN.source,
  description: `Your id for the ${what} (1-128 characters of A-Z a-z 0-9 . _ : -), scoped to this API key.`,
});
const limit = { type: 'integer', minimum: 1, maximum: 50, default: 15, description: 'Page size.' };
const cursor = { type: 'integer', minimum: 0, default: 0, description: 'Return records with an id greater than this (the previous next_cursor).' };
const idempotencyKey = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description:
    'Required. A unique value per intended change (e.g. a UUID). Retrying with the same key and arguments returns the first result instead of acting twice; the same key with other arguments is refused.',
};
const externalIdList = (what: string) => ({
  type: 'array',
  items: { type: 'string', pattern: EXTERNAL_ID_PATTERN.source },
  maxItems: MAX_LINKS,
  uniqueItems: true,
  description: `External ids of existing ${what} of this key (create them first). Replaces the current list.`,
});

const productFields = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  price: { type: 'integer', minimum: 0, maximum: MAX_PRICE, description: 'Price of the first variant in minor units (49000 = 490.00).' },
  quantity: { type: 'integer', minimum: 0, description: 'Stock of the first variant. Default 0.' },
  sku: { type: ['string', 'null'], maxLength: 64, description: 'SKU of the first variant, or null.' },
  description: { type: 'string', maxLength: 65_535, description: 'Plain text.' },
  status: { type: 'string', enum: [...PRODUCT_STATUSES], description: 'Default active; any other status archives the product.' },
  image_url: { type: ['string', 'null'], format: 'uri', description: 'A public https address, or null.' },
  category_external_ids: externalIdList('categories'),
  tag_external_ids: externalIdList('tags'),
};

const object = (properties: Record<string, object>, required: string[] = []): JsonSchemaObject => ({
  type: 'object',
  properties,
  ...(required.length ? { required } : {}),
  additionalProperties: false,
});

/** A write by external id: `external_id` goes into the path, every other argument is the body. */
function externalIdWrite(args: Args): ToolRequest {
  const id = stringArg(args, 'external_id', true);
  return { pathParameters: { external_id: pathSegment(id) }, body: rest(args, ['external_id']) };
}

const SETTABLE_ORDER_STATUSES = ORDER_STATUSES.filter((s) => s !== 'paid');

export const TOOLS: readonly ToolDefinition[] = [
  {
    name: 'list_products',
    title: 'List products',
    description: 'Lists the store\'s products in ascending id order, 15 per page by default, optionally filtered. Returns the page envelope of GET /products (data, current_page, last_page, total, ...).',
    method: 'GET',
    path: '/products',
    inputSchema: object({
      page: { type: 'integer', minimum: 1, default: 1, description: 'Page number, starting at 1.' },
      limit,
      filter_name: { type: 'string', maxLength: 255, description: 'Case-insensitive part of the product name.' },
      filter_sku: { type: 'string', maxLength: 64, description: 'Exact SKU of any variant.' },
      include_offers: { type: 'boolean', description: 'Add the variants (offers) to each product.' },
    }),
    toRequest: (args) => {
      onlyKnown(args, ['page', 'limit', 'filter_name', 'filter_sku', 'include_offers']);
      return {
        query: query({
          page: intArg(args, 'page'),
          limit: intArg(args, 'limit'),
          'filter[name]': stringArg(args, 'filter_name'),
          'filter[sku]': stringArg(args, 'filter_sku'),
          include: boolArg(args, 'include_offers') ? 'offers' : undefined,
        }),
      };
    },
    fieldNames: { 'filter[name]': 'filter_name', 'filter[sku]': 'filter_sku', include: 'include_offers' },
  },
  {
    name: 'get_product',
    title: 'Get a product',
    description: 'One product by its id in this store (the id from list_products, not an external id). Returns {data: Product}.',
    method: 'GET',
    path: '/products/{id}',
    inputSchema: object({ id: { type: 'integer', minimum: 1 }, include_offers: { type: 'boolean', description: 'Add the variants (offers).' } }, ['id']),
    toRequest: (args) => {
      onlyKnown(args, ['id', 'include_offers']);
      const id = intArg(args, 'id', true);
      return { pathParameters: { id }, query: query({ include: boolArg(args, 'include_offers') ? 'offers' : undefined }) };
    },
    fieldNames: { include: 'include_offers' },
  },
  {
    name: 'upsert_product',
    title: 'Create or replace a product',
    description:
      'Creates the product with this external id, or replaces every write field of it (omitted fields take their defaults). Categories and tags must exist for this key. Returns {data: mapped product}.',
    method: 'PUT',
    path: '/catalog/products/{external_id}',
    inputSchema: object({ external_id: externalId('product'), ...productFields }, ['external_id', 'name', 'price']),
    toRequest: externalIdWrite,
  },
  {
    name: 'update_product',
    title: 'Update a product',
    description: 'Changes only the supplied fields of an existing product of this key (not found otherwise). Returns {data: mapped product}.',
    method: 'PATCH',
    path: '/catalog/products/{external_id}',
    inputSchema: object({ external_id: externalId('product'), ...productFields }, ['external_id']),
    toRequest: externalIdWrite,
  },
  {
    name: 'upsert_category',
    title: 'Create or rename a category',
    description: 'Creates the category with this external id or renames it. Returns {data: category}.',
    method: 'PUT',
    path: '/catalog/categories/{external_id}',
    inputSchema: object({ external_id: externalId('category'), name: { type: 'string', minLength: 1, maxLength: 255 } }, ['external_id', 'name']),
    toRequest: externalIdWrite,
  },
  {
    name: 'upsert_tag',
    title: 'Create or rename a tag',
    description: 'Creates the tag with this external id or changes its value. Status labels (paid, archived, published, ...) are refused. Returns {data: tag}.',
    method: 'PUT',
    path: '/catalog/tags/{external_id}',
    inputSchema: object({ external_id: externalId('tag'), value: { type: 'string', minLength: 1, maxLength: 255 } }, ['external_id', 'value']),
    toRequest: externalIdWrite,
  },
  {
    name: 'list_orders',
    title: 'List orders',
    description:
      'Lists orders in ascending id order from a cursor, optionally only those updated at or after a time. Returns {data: [orders], next_cursor}; pass next_cursor as cursor for the next page (null: no more).',
    method: 'GET',
    path: '/orders',
    inputSchema: object({
      cursor,
      limit,
      updated_since: { type: 'string', format: 'date-time', description: 'ISO 8601 with offset, e.g. 2026-11-22T01:24:20Z.' },
    }),
    toRequest: (args) => {
      onlyKnown(args, ['cursor', 'limit', 'updated_since']);
      return {
        query: query({ cursor: intArg(args, 'cursor'), limit: intArg(args, 'limit'), updated_since: stringArg(args, 'updated_since') }),
      };
    },
  },
  {
    name: 'set_order_status',
    title: 'Change an order\'s status',
    description:
      'Moves an order to a new status (pending/paid → processing or cancelled; processing → shipped or cancelled; shipped → delivered or returned; delivered → returned). paid is set by the payment side only. Asking for the current status changes nothing. Returns {data: order}.',
    method: 'POST',
    path: '/orders/{reference}/status',
    inputSchema: object(
      {
        reference: { type: 'string', pattern: ORDER_REFERENCE_PATTERN.source, description: 'The order reference.' },
        status: { type: 'string', enum: SETTABLE_ORDER_STATUSES },
        [IDEMPOTENCY_ARG]: idempotencyKey,
      },
      ['reference', 'status', IDEMPOTENCY_ARG],
    ),
    toRequest: (args) => {
      const reference = stringArg(args, 'reference', true);
      const idempotencyKey = idempotencyKeyArg(args);
      return { pathParameters: { reference: pathSegment(reference) }, body: rest(args, ['reference', IDEMPOTENCY_ARG]), idempotencyKey };
    },
  },
  {
    name: 'list_pages',
    title: 'List content pages',
    description: 'Lists pages and blog posts in ascending id order from a cursor. Returns {data: [pages], next_cursor}.',
    method: 'GET',
    path: '/content/pages',
    inputSchema: object({ type: { type: 'string', enum: [...PAGE_TYPES], description: 'Only this type.' }, cursor, limit }),
    toRequest: (args) => {
      onlyKnown(args, ['type', 'cursor', 'limit']);
      return { query: query({ type: stringArg(args, 'type'), cursor: intArg(args, 'cursor'), limit: intArg(args, 'limit') }) };
    },
  },
  {
    name: 'save_page',
    title: 'Save a page as draft',
    description:
      'Creates or replaces the page with this external id. Saving never publishes: the page is a draft afterwards, also if it was published. The HTML body is sanitized. Returns {data: page}.',
    method: 'PUT',
    path: '/content/pages/{external_id}',
    inputSchema: object(
      {
        external_id: externalId('page'),
        type: { type: 'string', enum: [...PAGE_TYPES] },
        title: { type: 'string', minLength: 1, maxLength: TITLE_MAX, description: 'One line of plain text.' },
        slug: { type: 'string', pattern: SLUG_PATTERN.source, maxLength: SLUG_MAX, description: 'Unique in the store.' },
        body: { type: 'string', description: 'HTML (may be empty for a draft); scripts, styles, event handlers and unsafe URLs are removed.' },
      },
      ['external_id', 'type', 'title', 'slug', 'body'],
    ),
    toRequest: externalIdWrite,
  },
  {
    name: 'publish_page',
    title: 'Publish a page',
    description: 'Publishes a draft or unpublished page; an already published page stays as it is. Returns {data: page}.',
    method: 'POST',
    path: '/content/pages/{external_id}/publish',
    inputSchema: object({ external_id: externalId('page'), [IDEMPOTENCY_ARG]: idempotencyKey }, ['external_id', IDEMPOTENCY_ARG]),
    toRequest: (args) => {
      onlyKnown(args, ['external_id', IDEMPOTENCY_ARG]);
      const id = stringArg(args, 'external_id', true);
      return { pathParameters: { external_id: pathSegment(id) }, idempotencyKey: idempotencyKeyArg(args) };
    },
  },
  {
    name: 'unpublish_page',
    title: 'Unpublish a page',
    description: 'Takes a published page offline (status unpublished); a draft cannot be unpublished. Returns {data: page}.',
    method: 'POST',
    path: '/content/pages/{external_id}/unpublish',
    inputSchema: object({ external_id: externalId('page') }, ['external_id']),
    toRequest: (args) => {
      onlyKnown(args, ['external_id']);
      const id = stringArg(args, 'external_id', true);
      return { pathParameters: { external_id: pathSegment(id) } };
    },
  },
];

/** Query parameters from arguments, leaving out the ones not given (the endpoint's defaults apply). */
function query(entries: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => e[1] !== undefined));
}
