import sanitizeHtml from 'sanitize-html';
import { Parser } from 'htmlparser2';

/**
 * The HTML policy of page bodies (docs/contract.md#pages): an allow-list, never a block-list. What is not
 * named here does not survive: no scripts, event handlers, `style` (elements or attributes),
 * iframes/objects/embeds, forms, SVG/MathML, comments, classes or ids. Text is re-serialized with
 * `& < >` escaped and attributes with `& < > "` escaped, so nothing in the output can re-parse into
 * markup (which is what mutation XSS relies on): the output contains no raw-text element
 * (`style`, `script`, `textarea`, `title`, `noscript`, `xmp`, `iframe`, …) whose content a browser
 * would read differently from the parser that produced it.
 *
 * Pure (no I/O); the same function serves the HTTP route and the MCP tool.
 */

const HEADINGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'];
const TEXT_BLOCKS = ['p', 'br', 'hr', 'blockquote', 'pre'];
const LISTS = ['ul', 'ol', 'li'];
const TABLES = ['table', 'caption', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td'];
const INLINE = ['a', 'img', 'em', 'strong', 'b', 'i', 'code'];

export const ALLOWED_TAGS: readonly string[] = [...HEADINGS, ...TEXT_BLOCKS, ...LISTS, ...TABLES, ...INLINE];

/** Links may leave the site (http/https) or open mail; relative links (`/about-us`, `#top`) stay. */
export const LINK_SCHEMES: readonly string[] = ['http', 'https', 'mailto'];

/**
 * Elements whose content is dropped with them. Everything else that is not allowed loses only its
 * tags and keeps its text (`<span>Hello</span>` → `Hello`); the content of these is code, styling
 * or a document of its own, never the author's prose.
 */
const DROPPED_WITH_CONTENT = [
  'script',
  'style',
  'template',
  'textarea',
  'select',
  'option',
  'title',
  'head',
  'xmp',
  'plaintext',
  'noscript',
  'noembed',
  'noframes',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'svg',
  'math',
];

// C0 controls other than tab, LF, CR and FF, and DEL: invalid in HTML text, and a JSON response
// would spell each as six bytes (`\u0001`).
const CONTROL = /[\x00-\x08\x0B\x0E-\x1F\x7F]/g;
/** A UTF-16 half without its other half cannot be stored as UTF-8; it becomes U+FFFD as it would there. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function wellFormedText(s: string): string {
  return s.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * An image source must be an absolute https URL with a host: an image is fetched by every reader's
 * browser without a click, so neither a mixed-content `http:` address nor a `data:` blob nor a
 * path relative to wherever the page happens to be rendered is accepted.
 */
export function isHttpsImageSource(src: string): boolean {
  // What browsers strip from a URL before parsing it, so the check sees what they will.
  const cleaned = src.replace(/[\x00-\x20]+/g, '');
  if (!/^https:\/\/[^/\\]/i.test(cleaned)) return false;
  try {
    const url = new URL(cleaned);
    return url.protocol === 'https:' && url.hostname !== '';
  } catch {
    return false;
  }
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [...ALLOWED_TAGS],
  allowedAttributes: {
    a: ['href', 'title'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    ol: ['start'],
    th: ['colspan', 'rowspan', 'scope'],
    td: ['colspan', 'rowspan'],
  },
  // Only `href` and `src` survive on any element, and the schemes are per element.
  allowedSchemes: [],
  allowedSchemesByTag: { a: [...LINK_SCHEMES], img: ['https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  // `//host/x` takes the scheme of the page it is rendered in: http on an http page.
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
  nonTextTags: DROPPED_WITH_CONTENT,
  // No style attribute is allowed anywhere, so there is nothing for the CSS parser to do.
  parseStyleAttributes: false,
  allowVulnerableTags: false,
  // sanitize-html leaves a relative src alone; an image needs an absolute https one (see above).
  transformTags: {
    img: (tagName, attribs) => {
      const { src, ...rest } = attribs;
      return { tagName, attribs: src !== undefined && isHttpsImageSource(src) ? { src, ...rest } : rest };
    },
  },
  // An image without a source shows nothing but a broken icon; a link whose target was refused
  // keeps its text and loses the tag.
  exclusiveFilter: (frame) => {
    if (frame.tag === 'img' && !frame.attribs.src) return true;
    if (frame.tag === 'a' && !frame.attribs.href) return 'excludeTag';
    return false;
  },
  parser: { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
};

/**
 * How deep elements may nest. Real content stays far below; the bound exists because the HTML
 * parser keeps its open elements in an array it grows at the front, so each open tag costs time
 * proportional to the depth: 200,000 unclosed `<b>` (600 KB) take about 30 s of CPU, at this
 * bound a 1 MiB body takes well under a second.
 */
export const MAX_NESTING = 200;

export class NestingTooDeepError extends Error {
  constructor() {
    super(`elements nest more than ${MAX_NESTING} deep`);
    this.name = 'NestingTooDeepError';
  }
}

/**
 * The same parser with nothing but a depth counter, stopped as soon as the depth passes the bound:
 * linear in the input whatever it holds. Void elements open and close at once, implied closes
 * (`<p>` after `<p>`) are reported as closes, so the count is the parser's real depth.
 */
function assertNestingWithinBound(html: string): void {
  let depth = 0;
  const tooDeep = new NestingTooDeepError();
  const parser = new Parser(
    {
      onopentag: () => {
        if (++depth > MAX_NESTING) throw tooDeep;
      },
      onclosetag: () => {
        depth--;
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
}

/**
 * The body as it is stored and served: the allow-listed subset of `html`, re-serialized. Throws
 * NestingTooDeepError for markup nested deeper than MAX_NESTING (the caller's 422).
 */
export function sanitizePageBody(html: string): string {
  const text = wellFormedText(html).replace(CONTROL, '');
  assertNestingWithinBound(text);
  return sanitizeHtml(text, OPTIONS);
}
