import * as v from 'valibot';
import { fromQuery } from '../validation.ts';
import { CURSOR, PAGE_LIMIT, DEFAULT_LIMIT } from '../pagination.ts';
import { PAGE_TYPES, PAGE_VERSIONS } from './page.ts';

/** GET /content/pages's query, as the route and the MCP tool validate it and the API reference documents it. */
export const ListPagesQuery = v.object({
  type: v.optional(v.picklist(PAGE_TYPES, `must be one of ${PAGE_TYPES.join(', ')}`)),
  version: v.optional(v.picklist(PAGE_VERSIONS, `must be one of ${PAGE_VERSIONS.join(', ')}`)),
  cursor: v.optional(fromQuery(CURSOR), '0'),
  limit: v.optional(fromQuery(PAGE_LIMIT), String(DEFAULT_LIMIT)),
});
