/**
 * A page's ETag (docs/content.md#conditional-saves): SHA-256 (hex) of the RFC 8785 canonical JSON of
 * its draft, the content a save answers (`type`, `title`, `slug`, `body`; the live content when no
 * revision is pending), so a save's If-Match names the draft it was made from.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { Page, PageContent } from './page.ts';

export function contentChecksum(c: PageContent): string {
  const canonical = canonicalize({ type: c.type, title: c.title, slug: c.slug, body: c.body });
  if (canonical === undefined) throw new Error('page content is always JSON');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

/** The checksum of the draft a save would start from. */
export const draftChecksum = (p: Page): string => contentChecksum(p.draft ?? p);
