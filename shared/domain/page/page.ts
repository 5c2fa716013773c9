/** Content pages and blog posts (CONTRACT §9). */
export const PAGE_TYPES = ['page', 'blog'] as const;
export const PAGE_STATUSES = ['draft', 'published', 'unpublished'] as const;

export type PageType = (typeof PAGE_TYPES)[number];
export type PageStatus = (typeof PAGE_STATUSES)[number];

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
  created_at: string;
  updated_at: string;
}

/** The record of CONTRACT §9 (its field order is set by the mapper below). */
export type PageResource = Omit<Page, 'store_id' | 'owner_key_id' | 'external_id'> & { external_id: string | null };

/**
 * External ids belong to the key that set them (CONTRACT §3): a list shows every page of the
 * store, but another key's external id as null — it addresses nothing for the viewer, and it is
 * that integration's own business.
 */
export function toPageResource(p: Page, viewerKeyId: number = p.owner_key_id): PageResource {
  return {
    id: p.id,
    external_id: p.owner_key_id === viewerKeyId ? p.external_id : null,
    type: p.type,
    title: p.title,
    slug: p.slug,
    body: p.body,
    status: p.status,
    published_at: p.published_at,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}
