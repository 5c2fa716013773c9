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
