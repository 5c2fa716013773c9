import { nextUpdatedAt } from '../time.ts';
import type { Page, PageContent, PageStatus } from './page.ts';

export type { PageContent } from './page.ts';

/**
 * The publication state machine of docs/contract.md#pages, pure:
 *
 *   save (PUT)   new, draft, unpublished → draft (saving never publishes)
 *                published → published, with the save as its unpublished revision (`draft`);
 *                the live version stays live until the next publish
 *   publish      draft, unpublished → published;  published with a revision → published (the
 *                revision goes live);  published without one → no-op
 *   unpublish    published  → unpublished;  unpublished → no-op;  draft → refused (409)
 *
 * A draft was never made public in its current form, so "unpublishing" it names a state it is
 * not leaving; it is refused rather than silently turned into `unpublished`.
 */
export type PageAction = 'publish' | 'unpublish';

export type PageDecision =
  | { kind: 'noop' }
  | { kind: 'change'; from: PageStatus; to: PageStatus }
  | { kind: 'forbidden'; from: PageStatus; to: PageStatus };

export const PAGE_TRANSITIONS: Record<PageAction, { to: PageStatus; from: readonly PageStatus[] }> = {
  publish: { to: 'published', from: ['draft', 'unpublished'] },
  unpublish: { to: 'unpublished', from: ['published'] },
};

export function decide(action: PageAction, current: PageStatus, hasUnpublishedChanges = false): PageDecision {
  const { to, from } = PAGE_TRANSITIONS[action];
  if (action === 'publish' && current === 'published' && hasUnpublishedChanges)
    return { kind: 'change', from: current, to };
  if (current === to) return { kind: 'noop' };
  if (from.includes(current)) return { kind: 'change', from: current, to };
  return { kind: 'forbidden', from: current, to };
}

export const decidePublish = (current: PageStatus) => decide('publish', current);
export const decideUnpublish = (current: PageStatus) => decide('unpublish', current);

/**
 * The page after an allowed publish/unpublish. Publishing stamps published_at; unpublishing keeps
 * it. Either way a pending revision becomes the page's content: published, or (unpublish) kept
 * as what a later publish will show, so that taking a page offline never loses an edit.
 */
export function withStatus(page: Page, status: PageStatus, nowMs: number = Date.now()): Page {
  const at = nextUpdatedAt(page.updated_at, nowMs);
  return {
    ...page,
    ...(page.draft ?? {}),
    draft: null,
    status,
    updated_at: at,
    published_at: status === 'published' ? at : page.published_at,
  };
}

const sameContent = (a: PageContent, b: PageContent) =>
  a.type === b.type && a.title === b.title && a.slug === b.slug && a.body === b.body;

/** A page that does not exist yet, as a save creates it: always a draft, never published. */
export function newPage(
  content: PageContent,
  owner: { storeId: string; keyId: number; externalId: string },
  nowMs: number = Date.now(),
): Omit<Page, 'id'> {
  const at = new Date(nowMs).toISOString();
  return {
    store_id: owner.storeId,
    external_id: owner.externalId,
    owner_key_id: owner.keyId,
    ...content,
    status: 'draft',
    published_at: null,
    draft: null,
    created_at: at,
    updated_at: at,
  };
}

/**
 * A save of an existing page. A published page keeps its live version and holds the save as its
 * revision (a save equal to the live version drops the revision: nothing left to publish); any
 * other page gets the content and becomes a draft. Null when the result is exactly what is stored
 * already (a retried PUT), so that nothing is written and updated_at stays.
 */
export function savedPage(current: Page, content: PageContent, nowMs: number = Date.now()): Page | null {
  const at = nextUpdatedAt(current.updated_at, nowMs);
  if (current.status === 'published') {
    const draft = sameContent(current, content) ? null : { ...content };
    const unchanged =
      draft === null ? current.draft === null : current.draft !== null && sameContent(current.draft, draft);
    return unchanged ? null : { ...current, draft, updated_at: at };
  }
  if (current.status === 'draft' && sameContent(current, content)) return null;
  return { ...current, ...content, draft: null, status: 'draft', updated_at: at };
}
