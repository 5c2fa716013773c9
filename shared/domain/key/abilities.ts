export const ABILITIES = [
  'catalog:read',
  'catalog:write',
  'orders:read',
  'orders:write-status',
  'content:read',
  'content:write',
] as const;

export type Ability = (typeof ABILITIES)[number];

export function isAbility(value: string): value is Ability {
  return (ABILITIES as readonly string[]).includes(value);
}

/** Parses `a,b,c` (the admin's `--abilities`): each ability once, or which are unknown. */
export function parseAbilities(csv: string): { ok: true; value: Ability[] } | { ok: false; message: string } {
  const list = csv
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = list.filter((a) => !isAbility(a));
  if (unknown.length > 0)
    return { ok: false, message: `unknown abilities: ${unknown.join(', ')} (known: ${ABILITIES.join(', ')})` };
  return { ok: true, value: [...new Set(list)] as Ability[] };
}
