/**
 * A "skeleton" of a string for comparing it with a short list of words (the reserved tag values),
 * in the spirit of Unicode TS #39: two strings that look alike get the same skeleton. Not the
 * full confusables table: enough for Latin words spelled with look-alike letters of Cyrillic,
 * Greek and IPA, with compatibility forms, case, accents and invisible characters folded away.
 */
const LOOK_ALIKES: Record<string, string> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  с: 'c',
  ԁ: 'd',
  е: 'e',
  ё: 'e',
  һ: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  ӏ: 'l',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  ԛ: 'q',
  ѕ: 's',
  т: 't',
  у: 'y',
  ԝ: 'w',
  х: 'x',
  ү: 'y',
  ь: 'b',
  п: 'n',
  г: 'r',
  ѵ: 'v',
  // Greek
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  γ: 'y',
  ϲ: 'c',
  // Latin variants and IPA
  ı: 'i',
  ȷ: 'j',
  ɑ: 'a',
  ɡ: 'g',
  ɩ: 'i',
  ɪ: 'i',
  ʟ: 'l',
  ɴ: 'n',
  ʀ: 'r',
  ʏ: 'y',
  ᴅ: 'd',
  ᴇ: 'e',
  ᴘ: 'p',
  ᴛ: 't',
  ᴜ: 'u',
  ᴠ: 'v',
  ᴡ: 'w',
  ℓ: 'l',
  // Digits that pass for letters
  '0': 'o',
  '1': 'l',
};
const LOOK_ALIKE = new RegExp(`[${Object.keys(LOOK_ALIKES).join('')}]`, 'gu');

/**
 * NFKC (full-width and other compatibility forms to ASCII), lower case, accents and other combining
 * marks removed (so `PAİD` and `páid` fold to `paid`), format characters dropped (zero-width space,
 * BOM, soft hyphen), look-alike letters mapped to the Latin letter, surrounding whitespace trimmed.
 */
export function skeleton(value: string): string {
  return value
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFD')
    .replace(/[\p{M}\p{Cf}]/gu, '')
    .replace(LOOK_ALIKE, (c) => LOOK_ALIKES[c] ?? c)
    .trim();
}
