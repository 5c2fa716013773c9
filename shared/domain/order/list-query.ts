import * as v from 'valibot';
import { fromQuery } from '../validation.ts';
import { CURSOR, PAGE_LIMIT, DEFAULT_LIMIT } from '../pagination.ts';

/** GET /orders's query, as the route validates it and the API reference documents it. */
export const ListOrdersQuery = v.object({
  cursor: v.optional(fromQuery(CURSOR), '0'),
  limit: v.optional(fromQuery(PAGE_LIMIT), String(DEFAULT_LIMIT)),
  updated_since: v.optional(v.string()),
});
