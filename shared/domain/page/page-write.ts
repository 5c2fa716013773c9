/**
 * The page write shape (docs/contract.md#resources-and-fields, docs/contract.md#pages), as valibot
 * schemas (the list query: list-query.ts). Pure: the routes do the I/O. Bounds the contract leaves open are decided here (docs/content.md).
 */
import * as v from 'valibot';
import { PAGE_TYPES } from './page.ts';
import { plainText } from '../text.ts';
import { refused, type Refused } from '../outcome.ts';

export const TITLE_MAX = 255;
export const SLUG_MAX = 200;
/**
 * The sanitized body, counted as the UTF-8 bytes of its JSON string (what a response carries).
 * Bounded by what must hold it: a page item and the stored publish response are DynamoDB items
 * (≤ 400 KB each), and a list of 50 pages is one Lambda response (≤ 6 MB).
 */
export const BODY_MAX_BYTES = 100 * 1024;

export const SLUG_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SLUG_RULE = `1-${SLUG_MAX} characters of lowercase letters a-z, digits and single hyphens, not at the start or end`;

/** One line of plain text, stored as sent (never interpreted as HTML: consumers escape it); the rules of every text field. */
const Title = plainText({ min: 1, max: TITLE_MAX });

const Slug = v.pipe(
  v.string('must be a string'),
  v.check((s) => s.length >= 1 && s.length <= SLUG_MAX && SLUG_PATTERN.test(s), `must be ${SLUG_RULE}`),
);

export const bodyBytes = (body: string) => Buffer.byteLength(JSON.stringify(body), 'utf8') - 2;

/** HTML, as sent; `sanitizedBody` makes it what is stored. */
const Body = v.string('must be a string (HTML)');

const bodyRefused = (rule: string) => refused('validation_failed', `body: ${rule}`, 'body');

/**
 * A page body as stored: sanitized (./sanitize.ts), then bounded, the bound applying to what is
 * stored. A body it refuses is answered as the refusal (422 `validation_failed` on `body`, as the
 * schema's own would be), not thrown.
 *
 * Not a step of `PageBody`: the sanitizer (sanitize-html, htmlparser2 and entities, ~70 KB of
 * bundle) is imported here at the first body it cleans, so a function loads it when a page is
 * saved, not at every cold start (~11 ms of the Content function's import, `npm run bench`,
 * section bundles). A valibot step would have to import it before any schema could be built.
 */
export async function sanitizedBody(html: string): Promise<string | Refused> {
  const { MAX_NESTING, NestingTooDeepError, sanitizePageBody } = await import('./sanitize.ts');
  let clean: string;
  try {
    clean = sanitizePageBody(html);
  } catch (err) {
    if (!(err instanceof NestingTooDeepError)) throw err;
    return bodyRefused(`must not nest elements more than ${MAX_NESTING} deep`);
  }
  const bytes = bodyBytes(clean);
  if (bytes > BODY_MAX_BYTES)
    return bodyRefused(`must be at most ${BODY_MAX_BYTES} bytes after sanitizing (it is ${bytes})`);
  return clean;
}

const Type = v.picklist(PAGE_TYPES, `must be one of ${PAGE_TYPES.join(', ')}`);

/**
 * PUT replaces the whole page, so every field is required; `body` may be empty for a draft. The
 * body it gives is as sent: the route stores `sanitizedBody` of it.
 */
export const PageBody = v.strictObject({
  type: v.pipe(Type, v.description('page or blog.')),
  title: v.pipe(Title, v.description(`One line of plain text, 1-${TITLE_MAX} characters.`)),
  slug: v.pipe(Slug, v.description(`Unique in the store: ${SLUG_RULE}.`)),
  body: v.pipe(
    Body,
    v.description('HTML (may be empty for a draft); scripts, styles, event handlers and unsafe URLs are removed.'),
  ),
});

/** publish/unpublish carry no fields: an absent body and `{}` are the same request. */
export const ActionBody = v.strictObject({});
