import { parse } from '../../../shared/domain/validation.ts';
import { DomainError } from '../../../shared/domain/errors.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import { backoff, commitPageChange, createPage, getPage, pageIdForExternalId } from '../../../shared/db/page.repo.ts';
import { toPageResource, type Page, type PageResource } from '../../../shared/domain/page/page.ts';
import { PageBody } from '../../../shared/domain/page/page-write.ts';
import { newPage, savedPage } from '../../../shared/domain/page/rules.ts';
import { checkedExternalId, externalIdFromPathParameters, type ContentCaller } from '../input.ts';

/** Racing saves of one page each commit in turn; a round is lost only to another commit. */
const MAX_ATTEMPTS = 50;

const slugTaken = (slug: string) =>
  new DomainError('slug_taken', `Another page of this store already has the slug "${slug}".`, 'slug');

/**
 * PUT /content/pages/{external_id} and the MCP tool `save_page`: creates or replaces the page
 * this key's external id addresses, and always leaves it a draft. The body is validated and
 * sanitized before anything is read. The first save of an external id inserts the page, its
 * external-id map and its slug claim in one transaction guarded by `attribute_not_exists`, so of
 * racing first saves exactly one creates the page and the others update it. A save that would
 * change nothing writes nothing.
 */
export async function savePage(caller: ContentCaller, externalId: unknown, body: unknown): Promise<{ data: PageResource }> {
  const xid = checkedExternalId(externalId);
  const content = parse(PageBody, body ?? {});

  let id = await pageIdForExternalId(caller.keyId, xid);
  if (id === undefined) {
    const created = await createPage(newPage(content, { storeId: caller.storeId, keyId: caller.keyId, externalId: xid }));
    if (created.kind === 'created') return { data: toPageResource(created.page) };
    if (created.kind === 'slug_taken') throw slugTaken(content.slug);
    id = created.pageId ?? (await pageIdForExternalId(caller.keyId, xid));
    if (id === undefined) throw new Error(`page external id ${xid} of key ${caller.keyId} was taken but maps to nothing`);
  }

  let current: Page | undefined = await getPage(caller.storeId, id);
  for (let attempt = 1; ; attempt++) {
    // The map and its page are written in one transaction and never deleted.
    if (!current) throw new Error(`page external id ${xid} maps to missing page ${id}`);
    const next = savedPage(current, content);
    if (!next) return { data: toPageResource(current) };
    const result = await commitPageChange(current, next);
    if (result.kind === 'committed') return { data: toPageResource(next) };
    if (result.kind === 'slug_taken') throw slugTaken(content.slug);
    if (attempt >= MAX_ATTEMPTS) throw new Error(`page ${id}: save still contended after ${attempt} attempts`);
    if (result.kind === 'stale' && result.current) {
      current = result.current;
    } else {
      await backoff(attempt);
      current = await getPage(caller.storeId, id);
    }
  }
}

export const savePageRoute: RouteFn = async ({ principal, pathParameters, body }) => ({
  body: await savePage(principal, externalIdFromPathParameters(pathParameters), body),
});
