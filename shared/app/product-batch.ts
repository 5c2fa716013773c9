import type { RequestContext } from '#shared/context.ts';
import * as v from 'valibot';
import type { Product } from '#domain/product/product.ts';
import {
  offerCount,
  ProductPatchBody,
  ProductPutBody,
  type ProductPatch,
  type ProductWrite,
} from '#domain/product/product-write.ts';
import { externalIdOf, type BatchMode } from '#domain/product/batch.ts';
import { EXTERNAL_ID_RULE, validate } from '#domain/validation.ts';
import { DomainError, type ErrorCode } from '#domain/errors.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import type { Caller } from '#domain/principal.ts';
import { INSERT_GROUP_SIZE } from '#db/product/insert.repo.ts';
import { ProductIds } from './product-ids.ts';
import { outOfTime, undetermined } from './contention.ts';
import { resolveManyWriteTargets, type WriteTargets } from '#db/product/item.ts';
import { newDraft, patchResolved, putResolved, type WriteOutcome, type WriteResult } from './product-writes.ts';
import { preconditionFailed } from '#domain/product/checksum.ts';

export type BatchItemOutcome =
  | { external_id: string | null; ok: true; product: Product; result: WriteResult }
  | { external_id: string | null; ok: false; error: { code: ErrorCode; message: string; field: string | null } };

type CheckedItem = { index: number; externalId: string } & (
  | { mode: 'replace'; write: ProductWrite }
  | { mode: 'patch'; write: ProductPatch }
);

const ReplaceItem = v.strictObject({ external_id: v.unknown(), ...ProductPutBody.entries });
const PatchItem = v.strictObject({ external_id: v.unknown(), ...ProductPatchBody.entries });

/**
 * Each item is exactly the single PUT (replace) or PATCH (patch) of its external id — the same
 * validation, the same guards — and an item's refusal is its own answer, never failing the
 * others (`field` names the field inside the item). What a batch saves is round trips: the
 * targets of every item (links with the products' copies, references, the id sequence) are read
 * in one BatchGetItem, existing products are written in one guarded transaction each (8 at a time), and new
 * products are inserted a group at a
 * time in one transaction each; a group that meets an external id a racing write created falls
 * back to the single write per item, which turns into a replace as the single PUT does.
 */
export async function upsertProductBatch(
  ctx: RequestContext,
  caller: Caller,
  items: readonly unknown[],
  mode: BatchMode,
): Promise<BatchItemOutcome[]> {
  const outcomes = new Array<BatchItemOutcome>(items.length);
  const checked: CheckedItem[] = [];
  for (const [index, item] of items.entries()) {
    const one = checkItem(index, item, mode);
    if (isRefused(one)) outcomes[index] = failure(externalIdOf(item) ?? null, one);
    else checked.push(one);
  }

  const targets = await resolveManyWriteTargets(
    ctx,
    caller.keyId,
    checked.map((c) => ({
      externalId: c.externalId,
      categoryExternalIds: c.write.category_external_ids,
      tagExternalIds: c.write.tag_external_ids,
    })),
    mode === 'replace' ? { sequenceOf: caller.storeId } : {},
  );
  const fresh: { item: CheckedItem & { mode: 'replace' }; targets: WriteTargets }[] = [];
  const ids = new ProductIds(ctx, caller.storeId, targets.find((t) => t.sequence)?.sequence);
  try {
    const existing: { item: CheckedItem; target: WriteTargets }[] = [];
    for (const [i, item] of checked.entries()) {
      const target = targets[i] as WriteTargets;
      if (item.mode === 'replace' && target.productId === undefined && !target.missing)
        fresh.push({ item, targets: target });
      else existing.push({ item, target });
    }
    // Items of one batch address different products (an external id twice is refused), so their
    // single writes never contend with each other: a few at a time keep a batch well in its budget.
    await inPool(existing, WRITE_CONCURRENCY, async ({ item, target }) => {
      outcomes[item.index] = await itemOutcome(item.externalId, () =>
        item.mode === 'patch'
          ? patchResolved(ctx, caller, item.write, target)
          : putResolved(ctx, caller, item.externalId, item.write, target, ids),
      );
    });
    await insertFresh(ctx, caller, fresh, ids, outcomes);
  } finally {
    await ids.finish();
  }
  return outcomes;
}

/**
 * New products a group at a time, one transaction each. A batch of one group (up to 19) takes its
 * ids from the sequence read with the targets (the guarded path: no gap, no extra call); a batch
 * of more reserves the ids of all its new products with one ADD first, so no group holds the
 * sequence item or spends a transaction on a guard that lost, and each group holds 20. A group
 * that meets an external id a racing write created falls back to the single write per item; a
 * group the budget cannot hold any more is answered retryable, having written nothing.
 *
 * The groups go one after another, not side by side: sent all at once, a store under 50 batch
 * writers queued them past the request's budget, and items that landed late were answered
 * "not confirmed" instead of being refused cleanly (docs/catalog-writes.md, "Ids under contention").
 */
async function insertFresh(
  ctx: RequestContext,
  caller: Caller,
  fresh: { item: CheckedItem & { mode: 'replace' }; targets: WriteTargets }[],
  ids: ProductIds,
  outcomes: BatchItemOutcome[],
) {
  const drafts = fresh.map(({ item, targets: t }) => newDraft(caller, item.externalId, item.write, t));
  if (fresh.length > INSERT_GROUP_SIZE) await ids.reserveAll({ products: drafts.length, offers: offerCount(drafts) });
  // Decided once: 20 a group with the block reserved (five for 100), 19 on the guarded path.
  const size = ids.groupSize;
  for (let start = 0; start < fresh.length; start += size) {
    const group = fresh.slice(start, start + size);
    const inserted = await ids.insert(drafts.slice(start, start + size));
    for (const [i, { item, targets: t }] of group.entries()) {
      if (inserted.kind === 'inserted')
        outcomes[item.index] = {
          external_id: item.externalId,
          ok: true,
          product: inserted.products[i] as Product,
          result: 'created',
        };
      else if (inserted.kind === 'out_of_time')
        outcomes[item.index] = failure(item.externalId, outOfTime(`the product with external id ${item.externalId}`));
      else if (inserted.kind === 'undetermined')
        outcomes[item.index] = failure(
          item.externalId,
          undetermined(`the product with external id ${item.externalId}`),
        );
      else
        outcomes[item.index] = await itemOutcome(item.externalId, () =>
          putResolved(ctx, caller, item.externalId, item.write, t, ids),
        );
    }
  }
}

/** Single writes of one batch in flight at once. */
const WRITE_CONCURRENCY = 8;

async function inPool<T>(items: readonly T[], size: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(size, items.length) }, async () => {
      while (next < items.length) await run(items[next++] as T);
    }),
  );
}

/** The item as its single write would take it, or the refusal that is its answer. */
function checkItem(index: number, item: unknown, mode: BatchMode): CheckedItem | Refused {
  if (item === null || typeof item !== 'object' || Array.isArray(item))
    return refused('validation_failed', 'each item must be a JSON object');
  const externalId = externalIdOf(item);
  if (externalId === undefined)
    return refused('validation_failed', `external_id must be ${EXTERNAL_ID_RULE}`, 'external_id');
  // The mode picks the schema, so the write is that mode's.
  const checked = validate(mode === 'patch' ? PatchItem : ReplaceItem, item);
  if (isRefused(checked)) return checked;
  const { external_id: _xid, ...write } = checked;
  return { index, externalId, mode, write } as CheckedItem;
}

/** An item's answer: its refusal, or the fault (a DomainError) its single write threw. */
const failure = (externalId: string | null, err: Refused | DomainError): BatchItemOutcome => ({
  external_id: externalId,
  ok: false,
  error: { code: err.code, message: err.message, field: err.field },
});

/** An item's outcome from its single write: written, refused, or a fault it threw. */
async function itemOutcome(
  externalId: string,
  write: () => Promise<WriteOutcome | Refused>,
): Promise<BatchItemOutcome> {
  try {
    const written = await write();
    if (isRefused(written)) return failure(externalId, written);
    // A batch item carries no condition today; an item's own would answer here, alone.
    if (written.result === 'precondition_failed') return failure(externalId, preconditionFailed(written.header));
    return { external_id: externalId, ok: true, ...written };
  } catch (err) {
    if (err instanceof DomainError) return failure(externalId, err);
    throw err;
  }
}
