import type { RequestContext } from '#shared/context.ts';
import {
  createPage,
  getPage,
  listPagesAfter,
  readPageByExternalId,
  readPageSequence,
  readPageToSave,
  type CreateResult,
} from '#db/page/repo.ts';
import { commitPageChange } from '#db/page/change.repo.ts';
import { toPageResource, type Page, type PageResource, type PageType, type PageVersion } from '#domain/page/page.ts';
import { decide, newPage, savedPage, withStatus, type PageAction, type PageContent } from '#domain/page/rules.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { failedCondition, type WriteCondition } from '#domain/product/checksum.ts';
import { draftChecksum } from '#domain/page/checksum.ts';
import { done, retryOnStale, stale } from './contention.ts';
import type { Caller } from '#domain/principal.ts';
import { keyOrigin } from '#domain/event/event.ts';
import { pageEvent } from '#domain/event/page.ts';
import {
  afterTaken,
  answered,
  checkRecord,
  prepareAnswer,
  type Idempotent,
  type IdempotentRequest,
} from './idempotent-commit.ts';

export type PageDocument = { data: PageResource };
/**
 * A save's outcome: the saved draft, refused by its If-Match / If-None-Match, or refused because
 * another page of the store has its slug (nothing written).
 */
export type SaveOutcome =
  | PageDocument
  | { result: 'precondition_failed'; header: 'If-Match' | 'If-None-Match' }
  | Refused;

export interface PageListDocument {
  data: PageResource[];
  next_cursor: number | null;
}

const slugTaken = (slug: string) =>
  refused('slug_taken', `Another page of this store already has the slug "${slug}".`, 'slug');

/** One value for every request: a refusal is never changed once made. */
const PAGE_NOT_FOUND = refused('not_found', 'The page does not exist.');

/**
 * Creates or replaces the page this key's external id addresses. A new, draft or unpublished page
 * is a draft afterwards; a published one stays live and holds the save as its unpublished
 * revision (docs/contract.md#pages). The answer shows what was saved (the draft version).
 * The external-id item carries the page, so a save reads it and the page id sequence in one
 * BatchGetItem. The first save of an external id inserts the page, its external-id item and its
 * slug claim and moves the sequence in one transaction guarded by `attribute_not_exists` and the
 * sequence read, so of racing first saves exactly one creates the page and the others update the
 * page it hands back. A save that would change nothing writes nothing.
 */
export async function savePage(
  ctx: RequestContext,
  caller: Caller,
  xid: string,
  content: PageContent,
  condition: WriteCondition = {},
): Promise<SaveOutcome> {
  const read = await readPageToSave(ctx, caller, xid);
  let found = read.page;
  if (!found) {
    // No page yet: an If-Match (even `*`) cannot hold.
    const failed = failedCondition(condition, undefined);
    if (failed) return { result: 'precondition_failed', header: failed };
    const created = await create(
      ctx,
      newPage(content, { storeId: caller.storeId, keyId: caller.keyId, externalId: xid }),
      read.sequence,
    );
    if (created.kind === 'refused') return created;
    if (created.kind === 'created') return { data: toPageResource(created.page, caller.keyId, 'draft') };
    if (created.kind === 'slug_taken') return slugTaken(content.slug);
    found =
      created.page ?? (created.pageId === undefined ? undefined : await getPage(ctx, caller.storeId, created.pageId));
    if (!found) throw new Error(`page external id ${xid} of key ${caller.keyId} was taken but maps to nothing`);
    // Create only: the racing first save won, so this one must not replace it.
    if (condition.createOnly) return { result: 'precondition_failed', header: 'If-None-Match' };
  }
  const pageId = found.id;
  return retryOnStale<Page | undefined, SaveOutcome>({
    budget: ctx,
    what: `page ${pageId} of store ${caller.storeId}`,
    initial: found,
    read: () => getPage(ctx, caller.storeId, pageId),
    round: async (current) => {
      // The external-id item and its page are written in one transaction and never deleted.
      if (!current) throw new Error(`page external id ${xid} maps to missing page ${pageId}`);
      // Checked on the state each round decides from: a racing save makes the round stale and is checked again.
      const failed = failedCondition(condition, draftChecksum(current));
      if (failed) return done({ result: 'precondition_failed', header: failed });
      const next = savedPage(current, content);
      if (!next) return done({ data: toPageResource(current, caller.keyId, 'draft') });
      if (ctx.dryRun) return done({ data: toPageResource(next, caller.keyId, 'draft') });
      const result = await commitPageChange(ctx, current, next);
      if (result.kind === 'committed') return done({ data: toPageResource(next, caller.keyId, 'draft') });
      if (result.kind === 'slug_taken') return done(slugTaken(content.slug));
      return stale(result.kind === 'stale' ? result.current : undefined);
    },
  });
}

/**
 * A new page numbered from the page sequence `sequence` (read beside the page's external id; read
 * here when there is none). A create that loses the sequence to a concurrent one reads it again
 * and takes the next id.
 */
function create(
  ctx: RequestContext,
  draft: Omit<Page, 'id'>,
  sequence: number | undefined,
): Promise<Exclude<CreateResult, { kind: 'sequence_moved' }> | Refused> {
  return retryOnStale<number, Exclude<CreateResult, { kind: 'sequence_moved' }>>({
    budget: ctx,
    what: `the page with external id ${draft.external_id}`,
    ...(sequence === undefined ? {} : { initial: sequence }),
    read: () => readPageSequence(ctx, draft.store_id),
    round: async (read) => {
      // A dry run writes nothing: the page as the create would number it.
      if (ctx.dryRun) return done({ kind: 'created', page: { ...draft, id: read + 1 } });
      const created = await createPage(ctx, draft, read);
      return created.kind === 'sequence_moved' ? stale() : done(created);
    },
  });
}

/** For the seed and tests: a page in any state, or an error if its external id or slug is taken. */
export async function insertPage(ctx: RequestContext, draft: Omit<Page, 'id'>): Promise<Page> {
  const result = await create(ctx, draft, undefined);
  if (result.kind !== 'created') throw new Error(`page ${draft.external_id} not inserted: ${result.kind}`);
  return result.page;
}

/**
 * publish under an Idempotency-Key (docs/contract.md#idempotency): the page and the request's
 * idempotency record are read together, and the stored answer commits in the same transaction as
 * the change and its `page.published` event. A replay, a reused key or a twin in progress is the
 * result.
 */
export const publishPage = (
  ctx: RequestContext,
  caller: Caller,
  xid: string,
  request: IdempotentRequest,
): Promise<Idempotent<PageDocument> | Refused> => changeStatus(ctx, caller, xid, 'publish', request);

/** unpublish (a repeat is a no-op, so no Idempotency-Key): the change and its `page.unpublished` event. */
export async function unpublishPage(ctx: RequestContext, caller: Caller, xid: string): Promise<PageDocument | Refused> {
  const outcome = await changeStatus(ctx, caller, xid, 'unpublish', undefined);
  if (outcome.kind === 'refused') return outcome;
  // Without a request record no record can refuse: the outcome is the answer.
  if (outcome.kind !== 'answered') throw new Error(`unpublish of page ${xid} refused by a record it never read`);
  return outcome.answer;
}

/**
 * publish / unpublish of the page this key's external id addresses: the state machine decides,
 * and the change is written guarded on the `updated_at` it was decided from, so that of racing
 * requests each one decides again from what the winner wrote (publish twice → one change, one
 * no-op).
 */
async function changeStatus(
  ctx: RequestContext,
  caller: Caller,
  xid: string,
  action: PageAction,
  request: IdempotentRequest | undefined,
): Promise<Idempotent<PageDocument> | Refused> {
  // With a request, its idempotency record comes in the same BatchGetItem.
  const read = await readPageByExternalId(ctx, caller, xid, request?.recordKey);
  const check = request ? checkRecord(request, read.alongside) : undefined;
  if (check && check.kind !== 'fresh') return check;
  const first = read.page;
  if (!first) return PAGE_NOT_FOUND;
  return retryOnStale<Page | undefined, Idempotent<PageDocument> | Refused>({
    budget: ctx,
    what: `page ${first.id}: ${action}`,
    initial: first,
    read: () => getPage(ctx, caller.storeId, first.id),
    round: async (page) => {
      if (!page) return done(PAGE_NOT_FOUND);
      const decision = decide(action, page.status, page.draft !== null);
      if (decision.kind === 'noop') return done(answered({ data: toPageResource(page) }));
      // No field of the request is at fault: the page's state is.
      if (decision.kind === 'forbidden')
        return done(refused('invalid_transition', `A ${decision.from} page cannot become ${decision.to}.`));
      const next = withStatus(page, decision.to);
      const document = { data: toPageResource(next) };
      const prepared = request && prepareAnswer(request, { body: document });
      if (ctx.dryRun) return done(answered(document, prepared?.response));
      const type = action === 'publish' ? 'page.published' : 'page.unpublished';
      const event = pageEvent(type, next, keyOrigin(caller.keyId), page);
      const result = await commitPageChange(ctx, page, next, event, prepared ? [prepared.write] : []);
      if (result.kind === 'committed') return done(answered(document, prepared?.response));
      if (result.kind === 'guard_failed' && request) return done(await afterTaken(ctx, request, result.busy));
      return stale(result.kind === 'stale' ? result.current : undefined);
    },
  });
}

/**
 * Every page of the caller's store, ascending id from `cursor`, optionally of one `type` (the live
 * version's), each as its live version unless `version` is `draft`.
 */
export async function listPages(
  ctx: RequestContext,
  caller: Caller,
  params: { cursor: number; limit: number; type?: PageType | undefined; version?: PageVersion | undefined },
): Promise<PageListDocument> {
  const list = await listPagesAfter(ctx, caller.storeId, params.cursor, params.limit, params.type);
  const last = list.pages.at(-1);
  return {
    data: list.pages.map((p) => toPageResource(p, caller.keyId, params.version ?? 'live')),
    next_cursor: list.more && last ? last.id : null,
  };
}

/**
 * A dry run's "before" (docs/api.md#dry-runs). `draft`: as a save answers it (the saved version);
 * otherwise as publish and unpublish do.
 */
export async function currentPage(ctx: RequestContext, caller: Caller, externalId: string, draft: boolean) {
  const { page } = await readPageByExternalId(ctx, caller, externalId);
  if (!page) return undefined;
  return draft ? toPageResource(page, caller.keyId, 'draft') : toPageResource(page);
}
