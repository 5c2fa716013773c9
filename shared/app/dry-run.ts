import { withoutWrites } from '#db/core/dry-run.ts';

/**
 * What a dry run needs below HTTP (docs/api.md#dry-runs): running a write with every write held
 * back. Each entity's current state, to tell would_create, would_update and unchanged apart, is
 * read by its own use-case module (`currentMappedProduct`, `currentTaxonomy`, `currentPage`,
 * `currentOrder`), so a group's bundle holds only its own entities.
 */
export { withoutWrites };
