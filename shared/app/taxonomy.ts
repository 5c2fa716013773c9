import { readTaxonomy, upsertCategory, upsertTag } from '#db/taxonomy/repo.ts';
import type { Category, Tag, TaxonomyKind } from '#domain/product/taxonomy.ts';
import { nowIso } from '#domain/time.ts';
import type { Caller } from '#domain/principal.ts';

/** Create or rename a category of this key; the same name again is a 200 that writes nothing. */
export const putCategory = (caller: Caller, externalId: string, name: string): Promise<Category> =>
  upsertCategory(caller.storeId, caller.keyId, externalId, name, nowIso());

/** Create or rename a tag of this key; status labels were refused by validation (422 reserved_tag_value). */
export const putTag = (caller: Caller, externalId: string, value: string): Promise<Tag> =>
  upsertTag(caller.storeId, caller.keyId, externalId, value, nowIso());

/** A dry run's "before" (docs/api.md#dry-runs): this key's category or tag of that external id. */
export const currentTaxonomy = (kind: TaxonomyKind, caller: Caller, externalId: string) =>
  readTaxonomy(kind, caller.keyId, externalId);
