import { integerIn } from './validation.ts';

/** Laravel-style page envelope (docs/contract.md#resources-and-fields) for an ordered list of `total` records. */
export interface PageEnvelope<T> {
  current_page: number;
  data: T[];
  per_page: number;
  total: number;
  from: number | null;
  to: number | null;
  last_page: number;
  path: string;
  next_page_url: string | null;
  prev_page_url: string | null;
}

export function pageEnvelope<T>(input: {
  data: T[];
  page: number;
  limit: number;
  total: number;
  path: string;
  /** The request's other query parameters, kept on the page links. */
  query: Record<string, string>;
}): PageEnvelope<T> {
  const { data, page, limit, total, path, query } = input;
  const lastPage = Math.max(1, Math.ceil(total / limit));
  const link = (n: number) => {
    const params = new URLSearchParams({ ...query, page: String(n) });
    return `${path}?${params.toString()}`;
  };
  const from = data.length > 0 ? (page - 1) * limit + 1 : null;
  return {
    current_page: page,
    data,
    per_page: limit,
    total,
    from,
    to: from === null ? null : from + data.length - 1,
    last_page: lastPage,
    path,
    next_page_url: page < lastPage ? link(page + 1) : null,
    prev_page_url: page > 1 ? link(page - 1) : null,
  };
}

/** The ids on page `page` when a list is the dense id range 1..total. */
export function denseIdsOfPage(page: number, limit: number): number[] {
  const first = (page - 1) * limit + 1;
  return Array.from({ length: limit }, (_, i) => first + i);
}

/** The list parameters every list shares, typed; endpoints read them from the query with `fromQuery`. */
export const PAGE_NUMBER = integerIn(1, 1_000_000_000);
export const PAGE_LIMIT = integerIn(1, 50);
export const DEFAULT_LIMIT = 15;
export const CURSOR = integerIn(0, Number.MAX_SAFE_INTEGER);
