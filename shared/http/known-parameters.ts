import { refused, type Refused } from '#domain/outcome.ts';

/**
 * A query parameter a list endpoint does not know, as its refusal (422 on the parameter): a
 * misspelt filter (`types=blog`, `updated_after`) would otherwise silently widen what the list
 * answers. Undefined when every parameter is known.
 */
export function unknownParameter(query: Record<string, string>, known: readonly string[]): Refused | undefined {
  const unknown = Object.keys(query).find((k) => !known.includes(k));
  if (!unknown) return undefined;
  return refused('validation_failed', `${unknown} is not a known parameter (${known.join(', ')})`, unknown);
}
