import type { RouteFn } from '../../../shared/http/http-handler.ts';
import type { PageResource } from '../../../shared/domain/page/page.ts';
import { changePageStatus, checkAction } from './change-status.ts';
import { externalIdFromPathParameters, type ContentCaller } from '../input.ts';

/**
 * POST /content/pages/{external_id}/unpublish and the MCP tool `unpublish_page`: published →
 * unpublished, unpublished → 200 no-op, draft → 409 `invalid_transition`, unknown → 404. It is
 * safe to retry as it is (a repeat is a no-op), so no Idempotency-Key is required; one that is
 * sent is ignored.
 */
export async function unpublishPage(caller: ContentCaller, externalId: unknown, body?: unknown): Promise<{ data: PageResource }> {
  const xid = checkAction(externalId, body);
  return changePageStatus(caller, xid, 'unpublish');
}

export const unpublishPageRoute: RouteFn = async ({ principal, pathParameters, body }) => ({
  body: await unpublishPage(principal, externalIdFromPathParameters(pathParameters), body),
});
