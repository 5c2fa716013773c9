/** Lambda event-filter patterns as the event-source mapping applies them, for the local stream pollers (event/outbox-stream-filter.ts, name-index/stream.ts). */

/** An event-filter pattern made only of exact-match rules (arrays of allowed values), such as OUTBOX_STREAM_FILTER. */
export type FilterPattern = { readonly [field: string]: readonly (string | number | boolean | null)[] | FilterPattern };

/**
 * Evaluates an exact-match Lambda filter pattern against a record the way the event-source
 * mapping does: every field named in the pattern must exist and equal one of the listed values;
 * fields the pattern does not name are ignored. Other rule kinds (prefix, numeric, exists) are
 * not used by this service and are refused rather than guessed at.
 */
export function matchesFilter(pattern: FilterPattern, record: unknown): boolean {
  if (record === null || typeof record !== 'object') return false;
  for (const [field, rule] of Object.entries(pattern)) {
    const value = (record as Record<string, unknown>)[field];
    if (Array.isArray(rule)) {
      if (rule.some((r) => r !== null && typeof r === 'object'))
        throw new Error(`filter rule for "${field}" is not an exact match`);
      if (!rule.includes(value as never)) return false;
    } else if (!matchesFilter(rule as FilterPattern, value)) return false;
  }
  return true;
}
