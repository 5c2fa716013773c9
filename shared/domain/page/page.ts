/** Content pages and blog posts (CONTRACT §9). */
export type PageType = 'page' | 'blog';
export type PageStatus = 'draft' | 'published' | 'unpublished';

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
  published_at: string | null;
  created_at: string;
  updated_at: string;
}

export function toPageResource(p: Page) {
  const { store_id: _s, owner_key_id: _o, ...rest } = p;
  return rest;
}
