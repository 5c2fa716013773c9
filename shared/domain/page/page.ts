/** Content pages and blog posts (docs/contract.md#pages). */
export const PAGE_TYPES = ['page', 'blog'] as const;
export const PAGE_STATUSES = ['draft', 'published', 'unpublished'] as const;

export type PageType = (typeof PAGE_TYPES)[number];
export type PageStatus = (typeof PAGE_STATUSES)[number];

/** What a save (PUT) supplies: one version of a page. */
export interface PageContent {
  type: PageType;
  title: string;
  slug: string;
  body: string;
}

/** Which version a reader gets: the live one (default) or the latest saved one. */
export const PAGE_VERSIONS = ['live', 'draft'] as const;
export type PageVersion = (typeof PAGE_VERSIONS)[number];

/**
 * A page. `type`, `title`, `slug` and `body` are the live version (for a draft or unpublished
 * page simply its content); `draft` is a revision saved over a published page and not yet
 * published, null otherwise (docs/contract.md#pages).
 */
export interface Page {
  id: number;
  store_id: string;
  external_id: string;
  owner_key_id: number;
  type: PageType;
  title: string;
  slug: string;
  body: string;
  status: PageStatus;
  /** When the page was last published; kept through unpublish and later saves, null if never. */
  published_at: string | null;
  draft: PageContent | null;
  created_at: string;
  updated_at: string;
}

/** The record of docs/contract.md#pages (its field order is set by the mapper below). */
export type PageResource = Omit<Page, 'store_id' | 'owner_key_id' | 'external_id' | 'draft'> & {
  external_id: string | null;
  has_unpublished_changes: boolean;
};

/**
 * External ids belong to the key that set them (docs/contract.md#keys-and-abilities): a list shows every page of the
 * store, but another key's external id as null — it addresses nothing for the viewer, and it is
 * that integration's own business.
 *
 * `version` chooses the content shown: the live one, or with `draft` the latest saved revision.
 * `status`, `published_at` (the live version's) and `has_unpublished_changes` are the same in both.
 */
export function toPageResource(
  p: Page,
  /** Who reads it: only the owning key is shown the page's external id (null: nobody, as in an event). */
  viewerKeyId: number | null = p.owner_key_id,
  version: PageVersion = 'live',
): PageResource {
  const shown = version === 'draft' && p.draft ? p.draft : p;
  return {
    id: p.id,
    external_id: p.owner_key_id === viewerKeyId ? p.external_id : null,
    type: shown.type,
    title: shown.title,
    slug: shown.slug,
    body: shown.body,
    status: p.status,
    has_unpublished_changes: p.draft !== null,
    published_at: p.published_at,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}
