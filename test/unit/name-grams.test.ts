import { describe, expect, it } from 'vitest';
import { MAX_NAME_PROBES, NAME_GRAM_END, nameGrams, nameLookup } from '#domain/product/name-grams.ts';

const E = NAME_GRAM_END;

/** What the index promises: a needle occurs in a name only if the name is listed under what its lookup reads. */
function listedUnder(name: string, needle: string): boolean {
  const grams = nameGrams(name);
  const lookup = nameLookup(needle);
  return lookup.kind === 'prefix'
    ? grams.some((g) => g.startsWith(lookup.prefix))
    : lookup.grams.every((g) => grams.includes(g));
}

describe('name trigrams', () => {
  it('lists one trigram per position of the name, padded so that the last letters start one too', () => {
    expect(nameGrams('oak')).toEqual(['oak', `ak${E}`, `k${E}${E}`]);
    expect(nameGrams('a')).toEqual([`a${E}${E}`]);
  });

  it('lists each trigram once however often it occurs', () => {
    expect(nameGrams('aaaa')).toEqual(['aaa', `aa${E}`, `a${E}${E}`]);
  });

  it('counts code points, not UTF-16 units', () => {
    expect(nameGrams('😀ab')).toEqual(['😀ab', `ab${E}`, `b${E}${E}`]);
  });

  it('looks up a one- or two-letter needle by prefix and a longer one by its own trigrams', () => {
    expect(nameLookup('o')).toEqual({ kind: 'prefix', prefix: 'o' });
    expect(nameLookup('😀a')).toEqual({ kind: 'prefix', prefix: '😀a' });
    expect(nameLookup('walnut')).toEqual({ kind: 'grams', grams: ['wal', 'aln', 'lnu', 'nut'] });
  });

  it(`probes at most ${MAX_NAME_PROBES} trigrams, the first and the last among them`, () => {
    const lookup = nameLookup('a very long product name indeed');
    expect(lookup.kind === 'grams' && lookup.grams).toHaveLength(MAX_NAME_PROBES);
    expect(lookup.kind === 'grams' && [lookup.grams[0], lookup.grams.at(-1)]).toEqual(['a v', 'eed']);
  });

  it('never misses a name that contains the needle, wherever it occurs', () => {
    const names = ['oak desk', 'walnut chair', 'a', 'ab', 'brass 😀 lamp', 'linen linen linen', 'x y z'];
    for (const name of names) {
      const points = [...name];
      for (let start = 0; start < points.length; start++) {
        for (let end = start + 1; end <= points.length; end++) {
          const needle = points.slice(start, end).join('');
          expect(listedUnder(name, needle), `${needle} in ${name}`).toBe(true);
        }
      }
    }
  });

  it('leaves out a name that lacks a needle trigram', () => {
    expect(listedUnder('walnut chair', 'oak')).toBe(false);
    expect(listedUnder('walnut chair', 'q')).toBe(false);
  });
});
