import * as v from 'valibot';
import { fromQuery, parse } from '#domain/validation.ts';
import { validationFailed } from '#domain/errors.ts';
import { CURSOR, PAGE_LIMIT, DEFAULT_LIMIT } from '#domain/pagination.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { listPages as listPagesOfStore } from '#app/pages.ts';
import { PAGE_TYPES, PAGE_VERSIONS } from '#domain/page/page.ts';

const KNOWN = ['type', 'version', 'cursor', 'limit'];

export const ListPagesQuery = v.object({
  type: v.optional(v.picklist(PAGE_TYPES, `must be one of ${PAGE_TYPES.join(', ')}`)),
  version: v.optional(v.picklist(PAGE_VERSIONS, `must be one of ${PAGE_VERSIONS.join(', ')}`)),
  cursor: v.optional(fromQuery(CURSOR), '0'),
  limit: v.optional(fromQuery(PAGE_LIMIT), String(DEFAULT_LIMIT)),
});

/**
 * GET /content/pages: every page of the caller's store, ascending id from `cursor`, optionally of
 * one `type`; the live version of each unless `version=draft` asks for the latest saved one.
 */
export const listPages: RouteFn = async ({ principal, query }) => {
  // A misspelt filter (`types=blog`) would otherwise silently list everything.
  const unknown = Object.keys(query).find((k) => !KNOWN.includes(k));
  if (unknown) throw validationFailed(unknown, `${unknown} is not a known parameter (${KNOWN.join(', ')})`);
  const q = parse(ListPagesQuery, query);
  return { body: await listPagesOfStore(principal, q) };
};
