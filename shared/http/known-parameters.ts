import { validationFailed } from '#domain/errors.ts';

/**
 * Refuses, as 422 on the parameter, a query parameter a list endpoint does not know: a misspelt
 * filter (`types=blog`, `updated_after`) would otherwise silently widen what the list answers.
 */
export function onlyKnownParameters(query: Record<string, string>, known: readonly string[]): void {
  const unknown = Object.keys(query).find((k) => !known.includes(k));
  if (unknown) throw validationFailed(unknown, `${unknown} is not a known parameter (${known.join(', ')})`);
}
