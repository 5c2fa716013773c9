import type { RequestContext } from '#shared/context.ts';
import { commitTaxonomy, getTaxonomy, nextTaxonomyId, readTaxonomy, type TaxonomyRecord } from '#db/taxonomy/repo.ts';
import type { Category, Tag, TaxonomyKind } from '#domain/product/taxonomy.ts';
import { taxonomyEvent } from '#domain/event/product.ts';
import { nextUpdatedAt, nowIso } from '#domain/time.ts';
import { busy } from './contention.ts';
import type { Caller } from '#domain/principal.ts';
import type { Refused } from '#domain/outcome.ts';
import { UNKNOWN_ID } from './dry-run.ts';

/** Create or rename a category of this key; the same name again is a 200 that writes nothing. */
export const putCategory = async (
  ctx: RequestContext,
  caller: Caller,
  externalId: string,
  name: string,
): Promise<Category | Refused> => (await upsert(ctx, 'category', caller, externalId, name)) as Category | Refused;

/** Create or rename a tag of this key; status labels were refused by validation (422 reserved_tag_value). */
export const putTag = async (
  ctx: RequestContext,
  caller: Caller,
  externalId: string,
  value: string,
): Promise<Tag | Refused> => (await upsert(ctx, 'tag', caller, externalId, value)) as Tag | Refused;

const TEXT = { category: 'name', tag: 'value' } as const;
const ROUNDS = 5;

/**
 * Create or rename, with its `category.upserted` / `tag.upserted` event in the same transaction.
 * The record is read first (the event carries the whole record, and a transaction returns no new
 * values), then written guarded on what was read: a racing writer makes this one read again,
 * and the same text again writes nothing and raises nothing. `updated_at` moves only when the
 * text changes, and never back (nextUpdatedAt). Losing every round is the tenant's own contention
 * on one record, answered as for a product (docs/catalog-writes.md, "One hot product"): the
 * retryable `resource_busy`, with nothing written.
 */
async function upsert(
  ctx: RequestContext,
  kind: TaxonomyKind,
  caller: Caller,
  externalId: string,
  text: string,
): Promise<TaxonomyRecord | Refused> {
  const now = nowIso();
  for (let round = 0; round < ROUNDS; round++) {
    const existing = await getTaxonomy(ctx, kind, caller.keyId, externalId);
    const stored = existing as unknown as Record<string, unknown> | undefined;
    if (existing && stored?.[TEXT[kind]] === text) return existing;
    const record = (
      existing
        ? { ...existing, [TEXT[kind]]: text, updated_at: nextUpdatedAt(existing.updated_at, Date.parse(now)) }
        : {
            id: ctx.dryRun ? UNKNOWN_ID : await nextTaxonomyId(ctx, kind, caller.storeId),
            external_id: externalId,
            [TEXT[kind]]: text,
            created_at: now,
            updated_at: now,
          }
    ) as TaxonomyRecord;
    // The key's own external id rides beside the payload, not in it.
    const { external_id: _own, ...shown } = record;
    const event = taxonomyEvent(`${kind}.upserted`, caller.storeId, caller.keyId, externalId, shown, stored);
    if (ctx.dryRun) return record;
    const commit = await commitTaxonomy(ctx, kind, caller, record, existing?.updated_at, event);
    if (commit.kind === 'committed') return record;
  }
  return busy(`The ${kind} ${externalId}`);
}

/** A dry run's "before" (docs/api.md#dry-runs): this key's category or tag of that external id. */
export const currentTaxonomy = (ctx: RequestContext, kind: TaxonomyKind, caller: Caller, externalId: string) =>
  readTaxonomy(ctx, kind, caller.keyId, externalId);
