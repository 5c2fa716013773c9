import * as v from 'valibot';
import type { Product } from '../domain/product/product.ts';
import { ProductPatchBody, ProductPutBody, type ProductPatch, type ProductWrite } from '../domain/product/product-write.ts';
import { externalIdOf, type BatchMode } from '../domain/product/batch.ts';
import { EXTERNAL_ID_RULE } from '../domain/external-id.ts';
import { DomainError, validationFailed, type ErrorCode } from '../domain/errors.ts';
import { parse } from '../domain/validation.ts';
import type { Caller } from '../domain/principal.ts';
import { INSERT_GROUP_SIZE, insertProductGroup } from '../db/product-batch.repo.ts';
import { resolveManyWriteTargets, type WriteTargets } from '../db/product-refs.repo.ts';
import { newDraft, patchResolved, putResolved } from './product-writes.ts';

export type BatchItemOutcome =
  | { external_id: string | null; ok: true; product: Product }
  | { external_id: string | null; ok: false; error: { code: ErrorCode; message: string; field: string | null } };

type CheckedItem = { index: number; externalId: string } & ({ mode: 'replace'; write: ProductWrite } | { mode: 'patch'; write: ProductPatch });

const ReplaceItem = v.strictObject({ external_id: v.unknown(), ...ProductPutBody.entries });
const PatchItem = v.strictObject({ external_id: v.unknown(), ...ProductPatchBody.entries });

/**
 * Each item is exactly the single PUT (replace) or PATCH (patch) of its external id — the same
 * validation, the same guards — and an item's DomainError is its own answer, never failing the
 * others (`field` names the field inside the item). What a batch saves is round trips: the
 * targets of every item (links with the products' copies, references, the id sequence) are read
 * in one BatchGetItem, existing products are written in one guarded transaction each, and new
 * products are inserted a group at a
 * time in one transaction each; a group that meets an external id a racing write created falls
 * back to the single write per item, which turns into a replace as the single PUT does.
 */
export async function upsertProductBatch(caller: Caller, items: readonly unknown[], mode: BatchMode): Promise<BatchItemOutcome[]> {
  const outcomes = new Array<BatchItemOutcome>(items.length);
  const checked: CheckedItem[] = [];
  for (const [index, item] of items.entries()) {
    const settled = settleSync(externalIdOf(item) ?? null, () => checkItem(index, item, mode));
    if ('item' in settled) checked.push(settled.item);
    else outcomes[index] = settled.outcome;
  }

  const targets = await resolveManyWriteTargets(
    caller.keyId,
    checked.map((c) => ({ externalId: c.externalId, categoryExternalIds: c.write.category_external_ids, tagExternalIds: c.write.tag_external_ids })),
    mode === 'replace' ? { sequenceOf: caller.storeId } : {},
  );
  const fresh: { item: CheckedItem & { mode: 'replace' }; targets: WriteTargets }[] = [];
  for (const [i, item] of checked.entries()) {
    const target = targets[i] as WriteTargets;
    if (item.mode === 'replace' && target.productId === undefined && !target.missing) fresh.push({ item, targets: target });
    else outcomes[item.index] = await settle(item.externalId, () => (item.mode === 'patch' ? patchResolved(caller, item.write, target) : putResolved(caller, item.externalId, item.write, target)));
  }

  // The sequence read with the targets; each group hands the next one the state it left.
  let sequence = fresh[0]?.targets.sequence;
  for (let start = 0; start < fresh.length; start += INSERT_GROUP_SIZE) {
    const group = fresh.slice(start, start + INSERT_GROUP_SIZE);
    const inserted = await insertProductGroup(caller.storeId, group.map(({ item, targets: t }) => newDraft(caller, item.externalId, item.write, t)), sequence);
    sequence = inserted.kind === 'inserted' ? inserted.sequence : undefined;
    for (const [i, { item, targets: t }] of group.entries()) {
      outcomes[item.index] =
        inserted.kind === 'inserted'
          ? { external_id: item.externalId, ok: true, product: inserted.products[i] as Product }
          : await settle(item.externalId, () => putResolved(caller, item.externalId, item.write, t));
    }
  }
  return outcomes;
}

function checkItem(index: number, item: unknown, mode: BatchMode): CheckedItem {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw validationFailed(null, 'each item must be a JSON object');
  const externalId = externalIdOf(item);
  if (externalId === undefined) throw validationFailed('external_id', `external_id must be ${EXTERNAL_ID_RULE}`);
  if (mode === 'patch') {
    const { external_id: _xid, ...write } = parse(PatchItem, item);
    return { index, externalId, mode, write };
  }
  const { external_id: _xid, ...write } = parse(ReplaceItem, item);
  return { index, externalId, mode, write };
}

const failure = (externalId: string | null, err: DomainError): BatchItemOutcome => ({
  external_id: externalId,
  ok: false,
  error: { code: err.code, message: err.message, field: err.field },
});

function settleSync(externalId: string | null, check: () => CheckedItem): { item: CheckedItem } | { outcome: BatchItemOutcome } {
  try {
    return { item: check() };
  } catch (err) {
    if (err instanceof DomainError) return { outcome: failure(externalId, err) };
    throw err;
  }
}

async function settle(externalId: string, write: () => Promise<Product>): Promise<BatchItemOutcome> {
  try {
    return { external_id: externalId, ok: true, product: await write() };
  } catch (err) {
    if (err instanceof DomainError) return failure(externalId, err);
    throw err;
  }
}
