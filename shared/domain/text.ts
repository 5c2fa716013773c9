/**
 * Plain text fields (product name/description/sku, category name, tag value, page title): what
 * can be stored and shown safely, one rule set for all of them. A value is NFC-normalized; what
 * cannot be stored as UTF-8 (a lone surrogate) or shown safely (NUL and other controls, bidi
 * overrides that reorder what a reader sees, a value of invisible characters only) is refused with
 * 422 naming the field, never silently changed.
 */
import * as v from 'valibot';

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** C0 and C1 controls and DEL; a multi-line field keeps tab, line feed and carriage return. */
const CONTROL_SINGLE_LINE = /[\x00-\x1F\x7F-\x9F]/;
const CONTROL_MULTI_LINE = /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x9F]/;
/** Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069): "Trojan Source" reordering. */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
/** Whitespace, format characters (zero-width space/joiners, BOM, marks) and the blank-looking letters (Hangul fillers, braille blank). */
const INVISIBLE_ONLY = /^[\s\p{Cf}\p{Z}\u115F\u1160\u3164\uFFA0\u2800]*$/u;

/** Length in Unicode code points, so that an emoji counts as one character, not two. */
export const codePoints = (s: string) => [...s].length;

export interface PlainTextRule {
  min: number;
  max: number;
  /** Allows tab and line breaks (a description), not in a one-line label. */
  multiLine?: boolean;
}

/** The checks that come before any other rule of a field (reserved values compare the normalized form). */
export const cleanText = (multiLine = false) =>
  v.pipe(
    v.string('must be a string'),
    v.check((s) => !LONE_SURROGATE.test(s), 'must not contain unpaired UTF-16 surrogates (not representable as UTF-8)'),
    v.transform((s) => s.normalize('NFC')),
    v.check(
      (s) => !(multiLine ? CONTROL_MULTI_LINE : CONTROL_SINGLE_LINE).test(s),
      multiLine
        ? 'must not contain control characters other than tab and line breaks'
        : 'must not contain control characters (line breaks, tabs, NUL)',
    ),
    v.check((s) => !BIDI_CONTROL.test(s), 'must not contain bidirectional override or isolate characters'),
  );

/** A plain text field: clean, within its length, and not invisible when it has content (or a minimum). */
export const plainText = ({ min, max, multiLine = false }: PlainTextRule) =>
  v.pipe(
    cleanText(multiLine),
    v.check((s) => codePoints(s) >= min, min === 1 ? 'must not be empty' : `must be at least ${min} characters`),
    v.check((s) => codePoints(s) <= max, `must be at most ${max} characters`),
    v.check(
      (s) => (s === '' && min === 0) || !INVISIBLE_ONLY.test(s),
      'must not be blank (whitespace or invisible characters only)',
    ),
  );

/**
 * Request bodies as bytes and text, checked before anything parses or walks them: a body must be
 * UTF-8 (a replacement character would otherwise be stored in place of what the client sent) and
 * nest no deeper than MAX_JSON_DEPTH, so that no recursive step later (JSON.parse, validation,
 * the idempotency fingerprint) can run out of stack on a hostile body.
 */

/** Deeper than any document of the API (a batch item's id list is 4 levels; an MCP call adds 3). */
export const MAX_JSON_DEPTH = 32;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text of a body, or undefined when its bytes are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Whether JSON text opens more than `max` arrays/objects inside one another. A linear scan that
 * skips strings; it does not validate (JSON.parse does that afterwards, on text known to be shallow).
 */
export function nestsDeeperThan(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
