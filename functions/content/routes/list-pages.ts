import { validate } from '#domain/validation.ts';
import { isRefused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { ListPagesQuery } from '#domain/page/list-query.ts';
import type { RouteFn } from '#http/http-handler.ts';
import { unknownParameter } from '#http/known-parameters.ts';
import { listPages as listPagesOfStore } from '#app/pages.ts';

const KNOWN = ['type', 'version', 'cursor', 'limit'];

/**
 * GET /content/pages: every page of the caller's store, ascending id from `cursor`, optionally of
 * one `type`; the live version of each unless `version=draft` asks for the latest saved one.
 */
export const listPages: RouteFn = async (ctx, { principal, query }) => {
  // A misspelt filter (`types=blog`) would otherwise silently list everything.
  const unknown = unknownParameter(query, KNOWN);
  if (unknown) return problemResult(unknown);
  const q = validate(ListPagesQuery, query);
  if (isRefused(q)) return problemResult(q);
  return { body: await listPagesOfStore(ctx, principal, q) };
};
