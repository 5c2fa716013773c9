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

/** Parses `a,b,c` (admin CLI, authorizer context); throws on an unknown ability. */
export function parseAbilities(csv: string): Ability[] {
  const list = csv
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = list.filter((a) => !isAbility(a));
  if (unknown.length > 0) {
    throw new Error(`unknown abilities: ${unknown.join(', ')} (known: ${ABILITIES.join(', ')})`);
  }
  return [...new Set(list)] as Ability[];
}
