import * as v from 'valibot';
import { intString, parse } from '../../../shared/domain/validation.ts';
import { DomainError } from '../../../shared/domain/errors.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import { listPagesAfter } from '../../../shared/db/page.repo.ts';
import { PAGE_TYPES, toPageResource, type PageResource } from '../../../shared/domain/page/page.ts';
import type { ContentCaller } from '../input.ts';

const KNOWN = ['type', 'cursor', 'limit'];

const Query = v.object({
  type: v.optional(v.picklist(PAGE_TYPES, `must be one of ${PAGE_TYPES.join(', ')}`)),
  cursor: v.optional(intString(0, Number.MAX_SAFE_INTEGER), '0'),
  limit: v.optional(intString(1, 50), '15'),
});

export interface PageListDocument {
  data: PageResource[];
  next_cursor: number | null;
}

/**
 * GET /content/pages and the MCP tool `list_pages`: every page of the caller's store, ascending
 * id from `cursor`, optionally of one `type`. `next_cursor` is the last id of a full page when
 * another page follows, else null. Parameters arrive as query strings; a tool's integer
 * arguments are read as their decimal spelling.
 */
export async function listPages(caller: ContentCaller, params: Record<string, unknown>): Promise<PageListDocument> {
  // A misspelt filter (`types=blog`) would otherwise silently list everything.
  const unknown = Object.keys(params).find((k) => !KNOWN.includes(k));
  if (unknown) throw new DomainError('validation_failed', `${unknown} is not a known parameter (${KNOWN.join(', ')})`, unknown);
  const asText = Object.fromEntries(
    Object.entries(params)
      .filter(([, value]) => value !== undefined)
      .map(([k, value]) => [k, typeof value === 'number' && Number.isInteger(value) ? String(value) : value]),
  );
  const q = parse(Query, asText);
  const list = await listPagesAfter(caller.storeId, q.cursor, q.limit, q.type);
  const last = list.pages.at(-1);
  return {
    data: list.pages.map((p) => toPageResource(p, caller.keyId)),
    next_cursor: list.more && last ? last.id : null,
  };
}

export const listPagesRoute: RouteFn = async ({ principal, query }) => ({ body: await listPages(principal, query) });
