/**
 * Dry runs (docs/api.md#dry-runs) as the use cases honour them: a use case called with a dry-run
 * context (`ctx.dryRun`, shared/context.ts) reads and decides as for the real write, and at each
 * write it would make writes nothing and goes on as if the write had succeeded, so it answers
 * exactly what the write would have answered; nothing is stored (no record, no event, no
 * idempotency record, no step of an id sequence).
 *
 * New products are numbered from the product sequence as the write read it (a dry run never loses
 * a race, so it reserves no block of ids). An id the write would take from a counter without
 * reading it first (a new category's or tag's id, a new variant's offer id) is unknown, since the
 * counter is not moved: the answer shows it as null. NaN keeps the record's type; JSON writes it
 * as null.
 */
export const UNKNOWN_ID = Number.NaN;
