import { nextUpdatedAt } from '../clock.ts';
import type { Page, PageStatus, PageType } from './page.ts';

/**
 * The publication state machine of CONTRACT §9, pure:
 *
 *   save (PUT)   any        → draft        (saving never publishes; also for a published page)
 *   publish      draft, unpublished → published;  published → no-op
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

export function decide(action: PageAction, current: PageStatus): PageDecision {
  const { to, from } = PAGE_TRANSITIONS[action];
  if (current === to) return { kind: 'noop' };
  if (from.includes(current)) return { kind: 'change', from: current, to };
  return { kind: 'forbidden', from: current, to };
}

export const decidePublish = (current: PageStatus) => decide('publish', current);
export const decideUnpublish = (current: PageStatus) => decide('unpublish', current);

/** The page after an allowed publish/unpublish. Publishing stamps published_at; unpublishing keeps it. */
export function withStatus(page: Page, status: PageStatus, nowMs: number = Date.now()): Page {
  const at = nextUpdatedAt(page.updated_at, nowMs);
  return { ...page, status, updated_at: at, published_at: status === 'published' ? at : page.published_at };
}

export interface PageContent {
  type: PageType;
  title: string;
  slug: string;
  body: string;
}

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
    created_at: at,
    updated_at: at,
  };
}

/**
 * A save of an existing page: the content replaced, the page a draft again. Null when that is
 * exactly what is stored already (a retried PUT), so that nothing is written and updated_at stays.
 */
export function savedPage(current: Page, content: PageContent, nowMs: number = Date.now()): Page | null {
  const same =
    current.status === 'draft' &&
    current.type === content.type &&
    current.title === content.title &&
    current.slug === content.slug &&
    current.body === content.body;
  if (same) return null;
  return { ...current, ...content, status: 'draft', updated_at: nextUpdatedAt(current.updated_at, nowMs) };
}
