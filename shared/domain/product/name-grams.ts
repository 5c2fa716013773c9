/**
 * The trigrams of filter[name]'s index (as pg_trgm, without word splitting): a product is listed
 * under every distinct three-code-point window of its normalized name, so any needle of three or
 * more code points occurs only in names listed under each of its own trigrams, and reading the
 * shortest of those lists (then checking the names it holds) finds every match.
 *
 * The name is padded with two END marks, so every position of the name starts a trigram: a needle
 * of one or two code points occurs exactly in the names listed under some trigram that begins
 * with it. END is a control character, which plain-text names cannot contain.
 */
export const NAME_GRAM_END = '\u0003';

/** Trigrams a needle's lookup probes at most: any one of them is enough, more only help find a short list. */
export const MAX_NAME_PROBES = 6;

/** Distinct trigrams of a normalized name, in order of first occurrence. */
export function nameGrams(normalizedName: string): string[] {
  const points = [...normalizedName, NAME_GRAM_END, NAME_GRAM_END];
  const grams = new Set<string>();
  for (let i = 0; i + 3 <= points.length; i++) grams.add(points.slice(i, i + 3).join(''));
  return [...grams];
}

/**
 * How to look up a normalized, non-empty needle: `prefix` (one or two code points) reads every
 * trigram that starts with it; `grams` (three or more) reads the shortest list among a few of its
 * trigrams, spread over the needle (a rare trigram anywhere in it makes the whole lookup cheap).
 */
export type NameLookup = { kind: 'prefix'; prefix: string } | { kind: 'grams'; grams: string[] };

export function nameLookup(normalizedNeedle: string): NameLookup {
  const points = [...normalizedNeedle];
  if (points.length < 3) return { kind: 'prefix', prefix: normalizedNeedle };
  const all = [...new Set(Array.from({ length: points.length - 2 }, (_, i) => points.slice(i, i + 3).join('')))];
  if (all.length <= MAX_NAME_PROBES) return { kind: 'grams', grams: all };
  const step = (all.length - 1) / (MAX_NAME_PROBES - 1);
  return {
    kind: 'grams',
    grams: Array.from({ length: MAX_NAME_PROBES }, (_, i) => all[Math.round(i * step)] as string),
  };
}
