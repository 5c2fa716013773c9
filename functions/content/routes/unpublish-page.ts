import type { RouteFn } from '#http/http-handler.ts';
import { unpublishPage as unpublish } from '#app/pages.ts';
import { isRefused } from '#domain/outcome.ts';
import { problemResult } from '#http/error-status.ts';
import { checkAction } from '../input.ts';

/**
 * POST /content/pages/{external_id}/unpublish: published → unpublished, unpublished → 200 no-op,
 * draft → 409 `invalid_transition`, unknown → 404. A repeat is a no-op, so no Idempotency-Key is
 * required; one that is sent is ignored.
 */
export const unpublishPage: RouteFn = async (ctx, { principal, pathParameters, body }) => {
  const xid = checkAction(pathParameters, body);
  if (isRefused(xid)) return problemResult(xid);
  const page = await unpublish(ctx, principal, xid);
  return isRefused(page) ? problemResult(page) : { body: page };
};
