import { createHash } from 'node:crypto';
import type { ResponseBody } from '#http/openapi/resources.ts';

/**
 * Store data written by others — shoppers (an order's customer), other integrations and admins
 * (product names, page bodies) — reaches an agent through tool results. An agent must be able to
 * tell that text from instructions (docs/mcp.md#untrusted-content), so every result names those
 * fields (`untrusted_fields`, paths where `[]` steps into each element) and the text form wraps
 * each of their values in a marker, which the text cannot forge.
 */
export const UNTRUSTED_KEY = 'untrusted_fields';

const PRODUCT = [
  'name',
  'description',
  'sku',
  'thumbnail_url',
  'offers[].sku',
  'offers[].properties[].name',
  'offers[].properties[].value',
];
const MAPPED_PRODUCT = [...PRODUCT, 'external_id', 'category_external_ids[]', 'tag_external_ids[]'];
const ORDER = ['reference', 'customer.name', 'customer.email', 'customer.phone', 'items[].name', 'items[].sku'];
const PAGE = ['external_id', 'title', 'slug', 'body'];

const under = (prefix: string, fields: string[]) => fields.map((f) => `${prefix}${f}`);

/** The free-text fields of each response body. */
export const UNTRUSTED_FIELDS: Record<ResponseBody, readonly string[]> = {
  ProductPage: under('data[].', PRODUCT),
  ProductDocument: under('data.', PRODUCT),
  MappedProductDocument: under('data.', MAPPED_PRODUCT),
  BatchResult: under('data[].data.', MAPPED_PRODUCT),
  ChecksumList: under('data[].', ['external_id']),
  CategoryDocument: under('data.', ['external_id', 'name']),
  TagDocument: under('data.', ['external_id', 'value']),
  OrderList: under('data[].', ORDER),
  OrderDocument: under('data.', ORDER),
  PageList: under('data[].', PAGE),
  PageDocument: under('data.', PAGE),
  // An event's data holds the document of its family under the family's name (the owning key
  // also sees its external id there).
  EventList: [
    ...under('data[].data.product.', [...PRODUCT, 'external_id']),
    ...under('data[].data.category.', ['external_id', 'name']),
    ...under('data[].data.tag.', ['external_id', 'value']),
    ...under('data[].data.order.', ORDER),
    ...under('data[].data.page.', PAGE),
  ],
};

type Json = unknown;

/** `doc` with every string at one of `paths` passed through `wrap`; the rest shared, not copied. */
function mapAt(doc: Json, paths: readonly string[], wrap: (s: string) => string): Json {
  let out = doc;
  for (const path of paths) out = mapPath(out, path.split('.'), wrap);
  return out;
}

function mapPath(node: Json, steps: string[], wrap: (s: string) => string): Json {
  if (steps.length === 0) return typeof node === 'string' ? wrap(node) : node;
  const [step, ...rest] = steps as [string, ...string[]];
  const each = step.endsWith('[]');
  const key = each ? step.slice(0, -2) : step;
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const record = node as Record<string, Json>;
  if (!Object.hasOwn(record, key)) return node;
  const value = record[key];
  const next = each
    ? Array.isArray(value)
      ? value.map((el) => mapPath(el, rest, wrap))
      : value
    : mapPath(value, rest, wrap);
  return { ...record, [key]: next };
}

const TAG = 'untrusted-data';

/**
 * The text form: the document as JSON, each untrusted value between `<untrusted-data-ID>` and
 * `</untrusted-data-ID>`. Every `<` and `>` of the data is written as a JSON escape (`\u003c`), so
 * the markers are the only angle brackets in the text: a value cannot close a marker, a tool
 * result or anything else that looks like markup, and JSON.parse still gives the value back. The
 * ID is a hash of the document, so a value cannot name it either (it would have to contain its own
 * hash), and the same document always has the same text: an idempotent replay is byte for byte
 * the first answer.
 */
export function untrustedText(doc: Json, paths: readonly string[]): string {
  const id = createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 12);
  const open = `\u0001${id}o`;
  const close = `\u0001${id}c`;
  const escaped = JSON.stringify(mapAt(doc, paths, (s) => `${open}${s}${close}`)).replace(/[<>]/g, (c) =>
    c === '<' ? '\\u003c' : '\\u003e',
  );
  // JSON.stringify writes U+0001 as \u0001, which no data string can produce unescaped.
  return escaped
    .replaceAll(JSON.stringify(open).slice(1, -1), `<${TAG}-${id}>`)
    .replaceAll(JSON.stringify(close).slice(1, -1), `</${TAG}-${id}>`);
}
