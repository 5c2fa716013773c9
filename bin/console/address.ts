import { html, layout } from './html.ts';

/**
 * The console's addresses: a path that is not one answers 400 or 404 with a short page, never an
 * exception (a malformed address is the user's mistake, not something for the console's terminal).
 */

/** The path's segments, decoded; undefined when one is not valid percent-encoding (`%`, `%E0%A4%A`). */
export function segments(path: string): string[] | undefined {
  try {
    return path.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    // URIError, decodeURIComponent's only failure (it has no form that answers instead of throwing).
    return undefined;
  }
}

/** A key id as the console writes it: `1`, never `01`, `1.0`, `0x1`, `+1` or ` 1`. */
export const isKeyId = (segment: string) => /^[1-9]\d{0,14}$/.test(segment);

export function badAddressPage(): string {
  return layout(
    'Bad address',
    [{ label: 'Stores', href: '/' }, { label: 'Bad address' }],
    html`<p>This address is not valid: its percent-encoding is malformed (each <code>%</code> starts two hex digits, and together they spell UTF-8).</p><p><a href="/">Back to the stores</a></p>`,
  );
}

export function notFoundPage(text = 'No such page.'): string {
  return layout(
    'Not found',
    [{ label: 'Stores', href: '/' }, { label: 'Not found' }],
    html`<p>${text}</p><p><a href="/">Back to the stores</a></p>`,
  );
}
