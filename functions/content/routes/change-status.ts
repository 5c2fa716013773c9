import { parse } from '../../../shared/domain/validation.ts';
import { DomainError, notFound } from '../../../shared/domain/errors.ts';
import type { RouteResult } from '../../../shared/http/response.ts';
import { IdempotencyLockLost, type IdempotentSession } from '../../../shared/http/idempotency.ts';
import { backoff, commitPageChange, getPage, getPageByExternalId } from '../../../shared/db/page.repo.ts';
import { toPageResource, type Page, type PageResource } from '../../../shared/domain/page/page.ts';
import { ActionBody } from '../../../shared/domain/page/page-write.ts';
import { decide, withStatus, type PageAction } from '../../../shared/domain/page/rules.ts';
import { checkedExternalId, type ContentCaller } from '../input.ts';

/** Racing changes of one page each commit in turn; a round is lost only to another commit. */
const MAX_ATTEMPTS = 50;

/** Validation shared by publish and unpublish, before anything is read: the id, then the (empty) body. */
export function checkAction(externalId: unknown, body: unknown): string {
  const xid = checkedExternalId(externalId);
  parse(ActionBody, body ?? {});
  return xid;
}

/**
 * publish / unpublish of the page this key's external id addresses: the state machine decides,
 * and the change is written guarded on the `updated_at` it was decided from, so that of racing
 * requests each one decides again from what the winner wrote (publish twice → one change, one
 * no-op). With a `session` (publish under an Idempotency-Key) the stored response commits in the
 * same transaction as the change.
 */
export async function changePageStatus(
  caller: ContentCaller,
  xid: string,
  action: PageAction,
  session?: IdempotentSession,
): Promise<{ data: PageResource }> {
  let page: Page | undefined = await getPageByExternalId(caller, xid);
  const id = page?.id;
  for (let attempt = 1; ; attempt++) {
    if (!page) throw notFound('page');
    const decision = decide(action, page.status);
    if (decision.kind === 'noop') return { data: toPageResource(page) };
    if (decision.kind === 'forbidden') {
      // No field of the request is at fault: the page's state is.
      throw new DomainError('invalid_transition', `A ${decision.from} page cannot become ${decision.to}.`, null);
    }
    const next = withStatus(page, decision.to);
    const document = { data: toPageResource(next) };
    const prepared = session?.prepare({ body: document } satisfies RouteResult);
    const result = await commitPageChange(page, next, prepared ? [prepared.write] : []);
    if (result.kind === 'committed') {
      if (prepared) session?.committed(prepared);
      return document;
    }
    if (result.kind === 'guard_failed') throw new IdempotencyLockLost();
    if (attempt >= MAX_ATTEMPTS) throw new Error(`page ${page.id}: ${action} still contended after ${attempt} attempts`);
    if (result.kind === 'stale' && result.current) {
      page = result.current;
    } else {
      await backoff(attempt);
      page = id === undefined ? undefined : await getPage(caller.storeId, id);
    }
  }
}
