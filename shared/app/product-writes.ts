import {
  ExternalIdTakenError,
  getProductsByIds,
  insertProduct,
  modifyProduct,
  productIdsFor,
  reserveOfferId,
} from '#db/product/repo.ts';
import type { ProductIds } from '#db/product/batch.repo.ts';
import { markNamesPending } from '#db/product/index.repo.ts';
import { productCount, readProductSequence } from '#db/core/sequence.ts';
import {
  productByExternalId,
  productIdForExternalId,
  resolveWriteTargets,
  type WriteTargets,
} from '#db/product/item.ts';
import { toMappedProduct, type Product } from '#domain/product/product.ts';
import {
  applyProductChange,
  needsNewOffer,
  newProductDraft,
  type ProductChange,
  type ProductPatch,
  type ProductWrite,
} from '#domain/product/product-write.ts';
import { DomainError, notFound } from '#domain/errors.ts';
import { nowIso } from '#domain/time.ts';
import { keyOrigin } from '#domain/event/event.ts';
import type { Caller } from '#domain/principal.ts';

/**
 * Idempotent upsert: the external id of this key always addresses the same product. One
 * BatchGetItem reads its link (with the product's copy), the references and the id sequence;
 * then one transaction writes. The first PUT inserts (the insert transaction's guard on the external-id map makes racing first PUTs
 * create exactly one product; the losers replace it instead), any later one replaces every
 * write field; a PUT that changes nothing writes nothing.
 */
export async function putProduct(caller: Caller, externalId: string, write: ProductWrite): Promise<Product> {
  const targets = await resolveWriteTargets(
    caller.keyId,
    externalId,
    write.category_external_ids,
    write.tag_external_ids,
    { sequenceOf: caller.storeId },
  );
  return (await putResolved(caller, externalId, write, targets)).product;
}

/**
 * What a write did: `unchanged` when it changed nothing and so raised no event (a racing writer
 * that got there first with the same body makes the later ones `unchanged`).
 */
export type WriteResult = 'created' | 'updated' | 'unchanged';
export type Written = { product: Product; result: WriteResult };

/**
 * `putProduct` once the write's targets are known (a batch resolves those of all its items at
 * once, and passes the id source of the whole request as `ids`).
 */
export async function putResolved(
  caller: Caller,
  externalId: string,
  write: ProductWrite,
  targets: WriteTargets,
  ids?: ProductIds,
): Promise<Written> {
  assertReferencesExist(targets, write.category_external_ids, write.tag_external_ids);
  const change = { ...write, category_ids: targets.categoryIds };

  let id = targets.productId;
  let known = targets.product;
  if (id === undefined) {
    const source = ids ?? productIdsFor(caller.storeId, targets.sequence);
    try {
      return { product: await insertProduct(newDraft(caller, externalId, write, targets), source), result: 'created' };
    } catch (err) {
      if (!(err instanceof ExternalIdTakenError)) throw err;
      id = err.productId ?? (await productIdForExternalId(caller.keyId, externalId));
      known = err.product;
      if (id === undefined) throw err;
    } finally {
      // A reserved id this PUT did not use is recorded as a gap (the batch records its own at its end).
      if (!ids) await source.finish();
    }
  }
  const written = await applyToExisting(caller, id, change, known);
  // The external-id map and its product are written in one transaction and never deleted.
  if (!written) throw new Error(`external id maps to missing product ${id}`);
  return written;
}

/** A new product of this key from a full write whose references exist. */
export function newDraft(caller: Caller, externalId: string, write: ProductWrite, targets: WriteTargets) {
  return newProductDraft(
    { ...write, category_ids: targets.categoryIds },
    { storeId: caller.storeId, keyId: caller.keyId, externalId },
    nowIso(),
  );
}

/**
 * Merge: only the supplied fields change, applied to the latest stored state (re-applied if a
 * concurrent write got there first). A body equal to what is stored writes nothing. An unknown
 * external id of this key is 404.
 */
export async function patchProduct(caller: Caller, externalId: string, patch: ProductPatch): Promise<Product> {
  const targets = await resolveWriteTargets(
    caller.keyId,
    externalId,
    patch.category_external_ids,
    patch.tag_external_ids,
  );
  return (await patchResolved(caller, patch, targets)).product;
}

/** `patchProduct` once the write's targets are known. */
export async function patchResolved(caller: Caller, patch: ProductPatch, targets: WriteTargets): Promise<Written> {
  if (targets.productId === undefined) throw notFound('product');
  assertReferencesExist(targets, patch.category_external_ids, patch.tag_external_ids);
  const change: ProductChange = { ...patch };
  if (patch.category_external_ids !== undefined) change.category_ids = targets.categoryIds;
  const written = await applyToExisting(caller, targets.productId, change, targets.product);
  if (!written) throw notFound('product');
  return written;
}

/**
 * Applies a write to the latest state of product `id` (PUT and PATCH alike), starting from
 * `known` (the link's copy) when there is one; undefined if the product is gone.
 */
async function applyToExisting(
  caller: Caller,
  id: number,
  change: ProductChange,
  known: Product | undefined,
): Promise<Written | undefined> {
  const storeId = caller.storeId;
  // A round that meets a racing write runs the change again on the newer state, so the last
  // round's answer is what was committed: a change (updated) or nothing to change (unchanged).
  let changed = false;
  const product = await modifyProduct(
    storeId,
    id,
    async (current) => {
      const next = applyProductChange(
        current,
        change,
        nowIso(),
        needsNewOffer(current, change) ? await reserveOfferId(storeId) : undefined,
      );
      changed = next !== null;
      return next;
    },
    known,
    keyOrigin(caller.keyId),
  );
  return product && { product, result: changed ? 'updated' : 'unchanged' };
}

/** 422 `unknown_reference` naming the array element, e.g. `category_external_ids[1]`. */
export function assertReferencesExist(targets: WriteTargets, categoryIds: string[] = [], tagIds: string[] = []): void {
  const missing = targets.missing;
  if (!missing) return;
  const list = missing.list === 'category' ? 'category_external_ids' : 'tag_external_ids';
  const value = (missing.list === 'category' ? categoryIds : tagIds)[missing.index];
  const resource = missing.list === 'category' ? 'categories' : 'tags';
  throw new DomainError(
    'unknown_reference',
    `No ${missing.list} with external id ${value} exists for this key (create it with PUT /catalog/${resource}/${value} first).`,
    `${list}[${missing.index}]`,
  );
}

/** Products whose names one transaction marks pending (two actions each, at most 100). */
const REINDEX_CHUNK = 50;

/**
 * Puts every product of the store in the name indexer's queue again (docs/deploy.md): for stores
 * whose products predate the trigram postings. Searches stay exact meanwhile (pending names are
 * read first); a chunk a concurrent write changed is read again and retried.
 */
export async function reindexProductNames(storeId: string): Promise<{ store_id: string; products: number }> {
  const sequence = await readProductSequence(storeId);
  const last = sequence.last;
  for (let from = 1; from <= last; from += REINDEX_CHUNK) {
    const ids = Array.from({ length: Math.min(REINDEX_CHUNK, last - from + 1) }, (_, i) => from + i);
    for (let attempt = 1; !(await markNamesPending(await getProductsByIds(storeId, ids, true))); attempt++) {
      if (attempt >= 50) throw new Error(`store ${storeId}: products ${from}..${from + ids.length - 1} kept changing`);
    }
  }
  return { store_id: storeId, products: productCount(sequence) };
}

/** A dry run's "before" (docs/api.md#dry-runs): the product this key's external id addresses, as a write answers it. */
export async function currentMappedProduct(
  caller: Caller & { currency: string | null },
  externalId: string,
  includeOffers: boolean,
) {
  const product = await productByExternalId(caller.storeId, caller.keyId, externalId);
  return product && toMappedProduct(product, caller.currency, includeOffers);
}
