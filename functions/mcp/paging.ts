import type { ResponseBody } from '#http/openapi/resources.ts';
import type { Args } from './args.ts';

/**
 * Bounded answers (docs/mcp.md#bounded-answers): a list result holds at most MAX_RESULT_CHARS of
 * JSON text. A page of records that is larger is shortened to the records that fit, and every
 * list result with more records after it carries `more_available`: the arguments of the call that
 * continues exactly where this one stopped. Nothing is ever left out without that marker. One
 * record is never cut (a page body is at most 100 KB, which fits).
 */
export const MAX_RESULT_CHARS = 200_000;
export const MORE_KEY = 'more_available';

export interface More {
  /** limit: the page size was reached; size: the records that fit within MAX_RESULT_CHARS. */
  reason: 'limit' | 'size';
  /** The tool to call next, with `arguments`. */
  tool: string;
  arguments: Args;
}

type Doc = Record<string, unknown> & { data: unknown[] };

const size = (doc: unknown) => JSON.stringify(doc).length;

/** The answer within the bound, with `more_available` when more records follow. */
export function bounded(
  tool: string,
  output: ResponseBody,
  doc: Record<string, unknown>,
  args: Args,
  max = MAX_RESULT_CHARS,
): Record<string, unknown> {
  if (output === 'OrderList' || output === 'PageList') return cursorList(tool, doc as Doc, args, max);
  // The event log's cursor is the sequence (its ids are event ids, not numbers).
  if (output === 'EventList') return cursorList(tool, doc as Doc, args, max, 'sequence');
  if (output === 'ProductPage') return pageList(tool, doc as Doc, args, max);
  if (output === 'BatchResult' && size(doc) > max) return slimBatch(doc as Doc);
  return doc;
}

function cursorList(
  tool: string,
  doc: Doc,
  args: Args,
  max: number,
  cursorField: 'id' | 'sequence' = 'id',
): Record<string, unknown> {
  let data = doc.data as Record<string, number>[];
  let reason: More['reason'] = 'limit';
  if (size(doc) > max) {
    reason = 'size';
    data = fitting(data, (n) => ({ ...doc, data: data.slice(0, n) }), max, 1);
  }
  const nextCursor = data.length < doc.data.length ? data.at(-1)![cursorField]! : (doc.next_cursor as number | null);
  const answer: Record<string, unknown> = { ...doc, data, next_cursor: nextCursor };
  if (nextCursor !== null)
    answer[MORE_KEY] = { reason, tool, arguments: { ...args, cursor: nextCursor } } satisfies More;
  return answer;
}

/**
 * A page-numbered list is shortened to a divisor of its page size: the first k records of page p
 * of size L are exactly page (p-1)·L/k + 1 of size k, so the continuation stays a plain
 * page/limit call and the envelope stays true.
 */
function pageList(tool: string, doc: Doc, args: Args, max: number): Record<string, unknown> {
  let page = doc as Doc & { current_page: number; per_page: number; total: number; last_page: number };
  let reason: More['reason'] = 'limit';
  if (size(doc) > max) {
    reason = 'size';
    const limit = page.per_page;
    const divisors = Array.from({ length: limit }, (_, i) => limit - i).filter((k) => limit % k === 0);
    const k = divisors.find((d) => size(reshape(page, d)) <= max) ?? 1;
    page = reshape(page, k);
  }
  if (page.current_page >= page.last_page) return page;
  const more: More = { reason, tool, arguments: { ...args, page: page.current_page + 1, limit: page.per_page } };
  return { ...page, [MORE_KEY]: more };
}

function reshape<D extends Doc & { current_page: number; per_page: number; total: number }>(doc: D, k: number): D {
  if (k === doc.per_page) return doc;
  const offset = (doc.current_page - 1) * doc.per_page;
  const page = offset / k + 1;
  const data = doc.data.slice(0, k);
  const link = (n: number) =>
    n < 1 || n > Math.max(1, Math.ceil(doc.total / k))
      ? null
      : pageUrl(doc.path as string, n, k, (doc.next_page_url ?? doc.prev_page_url) as string | null);
  return {
    ...doc,
    data,
    current_page: page,
    per_page: k,
    from: data.length ? offset + 1 : null,
    to: data.length ? offset + data.length : null,
    last_page: Math.max(1, Math.ceil(doc.total / k)),
    next_page_url: link(page + 1),
    prev_page_url: link(page - 1),
  };
}

/** A page link with the original link's other query parameters (filters, include). */
function pageUrl(path: string, page: number, limit: number, sample: string | null): string {
  const query = new URLSearchParams(sample ? new URL(sample).search : '');
  query.set('page', String(page));
  query.set('limit', String(limit));
  return `${path}?${query.toString()}`;
}

/** The longest prefix (at least `min`) whose answer fits. */
function fitting<T>(data: T[], answer: (n: number) => unknown, max: number, min: number): T[] {
  let n = data.length;
  while (n > min && size(answer(n)) > max) n--;
  return data.slice(0, n);
}

/**
 * The writes of a batch have happened, so its answer is never cut: past the bound the product
 * documents are left out (each item keeps its external id, status, result and error), and the marker names
 * the tool that reads one (its arguments: the external id of the item).
 */
function slimBatch(doc: Doc): Record<string, unknown> {
  const data = (doc.data as Array<Record<string, unknown>>).map((item) => ({ ...item, data: null }));
  return {
    ...doc,
    data,
    [MORE_KEY]: { reason: 'size', tool: 'get_product_by_external_id', arguments: {} } satisfies More,
  };
}
