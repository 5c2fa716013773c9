import type { RequestContext } from '#shared/context.ts';
import { commitProductChange, getProductsByIds, reserveOfferId } from '#db/product/repo.ts';
import type { Winner } from '#db/product/insert.repo.ts';
import { markNamesPending } from '#db/product/index.repo.ts';
import { productCount, readProductSequence, type ProductSequence } from '#db/core/sequence.ts';
import {
  getProduct,
  productByExternalId,
  productIdForExternalId,
  resolveWriteTargets,
  type WriteTargets,
} from '#db/product/item.ts';
import { productNotFound, toMappedProduct, type Product } from '#domain/product/product.ts';
import {
  applyProductChange,
  needsNewOffer,
  newProductDraft,
  type NewProduct,
  type ProductChange,
  type ProductPatch,
  type ProductWrite,
} from '#domain/product/product-write.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { failedCondition, productChecksum, type WriteCondition } from '#domain/product/checksum.ts';
import { nowIso } from '#domain/time.ts';
import { keyOrigin } from '#domain/event/event.ts';
import { productEvent } from '#domain/event/product.ts';
import type { Caller } from '#domain/principal.ts';
import {
  BUDGET_ONLY,
  type ContentionBound,
  done,
  HOT_ITEM_BOUND,
  outOfTime,
  retryOnStale,
  stale,
  undetermined,
} from './contention.ts';
import { ProductIds, settledSequence, type InsertOutcome } from './product-ids.ts';
import { UNKNOWN_ID } from './dry-run.ts';

/**
 * Idempotent upsert: the external id of this key always addresses the same product. Read, decide,
 * commit: one BatchGetItem reads its link (with the product's copy), the references and the id
 * sequence; then one transaction writes. The first PUT inserts (`insertNew`; the insert
 * transaction's guard on the external-id map makes racing first PUTs create exactly one product,
 * and the losers replace the winner instead), any later one replaces every write field
 * (`applyToExisting`); a PUT that changes nothing writes nothing.
 */
export async function putProduct(
  ctx: RequestContext,
  caller: Caller,
  externalId: string,
  write: ProductWrite,
  condition: WriteCondition = {},
): Promise<WriteOutcome | Refused> {
  const targets = await resolveWriteTargets(
    ctx,
    caller.keyId,
    externalId,
    write.category_external_ids,
    write.tag_external_ids,
    { sequenceOf: caller.storeId },
  );
  return putResolved(ctx, caller, externalId, write, targets, undefined, condition, HOT_ITEM_BOUND);
}

/**
 * What a write did: `unchanged` when it changed nothing and so raised no event (a racing writer
 * that got there first with the same body makes the later ones `unchanged`).
 */
export type WriteResult = 'created' | 'updated' | 'unchanged';
export type Written = { product: Product; result: WriteResult };
/**
 * A write's outcome: written, or refused by its If-Match / If-None-Match against the state the
 * write decided from (`header` names the one that failed; nothing was written).
 */
export type WriteOutcome = Written | { result: 'precondition_failed'; header: 'If-Match' | 'If-None-Match' };

/**
 * `putProduct` once the write's targets are known (a batch resolves those of all its items at
 * once, and passes the id source of the whole request as `ids`). `bound`: how far a replace
 * contended on its product goes before it is refused (a single write's is HOT_ITEM_BOUND; a batch
 * item has only its request's budget, as the request may have run long before the item's turn).
 */
export async function putResolved(
  ctx: RequestContext,
  caller: Caller,
  externalId: string,
  write: ProductWrite,
  targets: WriteTargets,
  ids?: ProductIds,
  condition: WriteCondition = {},
  bound: ContentionBound = BUDGET_ONLY,
): Promise<WriteOutcome | Refused> {
  const unknown = unknownReference(targets, write.category_external_ids, write.tag_external_ids);
  if (unknown) return unknown;
  const change = { ...write, category_ids: targets.categoryIds };

  let id = targets.productId;
  let known = targets.product;
  if (id === undefined) {
    // No product yet: an If-Match (even `*`) cannot hold.
    const failed = failedCondition(condition, undefined);
    if (failed) return { result: 'precondition_failed', header: failed };
    const draft = newDraft(caller, externalId, write, targets);
    const inserted = ids ? await ids.insert([draft]) : await insertNew(ctx, draft, targets.sequence);
    const created = createdOrTaken(inserted, `the product with external id ${externalId}`);
    if (created.kind === 'created') return { product: created.product, result: 'created' };
    // A racing first PUT created it: this one replaces what it wrote.
    id = created.winner.productId ?? (await productIdForExternalId(ctx, caller.keyId, externalId));
    known = created.winner.product;
    if (id === undefined) throw new Error(`external id ${externalId} of key ${caller.keyId} taken but unmapped`);
    // Create only: the racing first PUT won, so this one must not replace it.
    if (condition.createOnly) return { result: 'precondition_failed', header: 'If-None-Match' };
  }
  const written = await applyToExisting(ctx, caller, id, change, known, condition, bound);
  // The external-id map and its product are written in one transaction and never deleted.
  if (!written) throw new Error(`external id maps to missing product ${id}`);
  return written;
}

/**
 * The product an insert created, or the winner of a racing write that created the external id
 * first; an insert the budget could not hold, or the store did not confirm, is the retryable 503.
 * Not the 429 of a hot product: an insert never loses to writers of its own product (it takes
 * reserved ids once it lost the store's sequence once), so only a request gone slow runs out.
 */
function createdOrTaken(
  outcome: InsertOutcome,
  what: string,
): { kind: 'created'; product: Product } | { kind: 'taken'; winner: Winner } {
  switch (outcome.kind) {
    case 'inserted':
      return { kind: 'created', product: outcome.products[0] as Product };
    case 'external_id_taken':
      return { kind: 'taken', winner: outcome.winner };
    case 'undetermined':
      throw undetermined(what);
    default:
      throw outOfTime(what);
  }
}

/**
 * The single insert: the request's own ids (./product-ids.ts) for its one draft, numbered from the
 * sequence state the write's read found (`read`) and committed with its `product.created` event
 * in one transaction guarded on that state. Only when another create moved the sequence first
 * does it reserve one id (one round trip more) and insert with it, then close the reservation
 * before the answer (one more), recording the id as a gap if it went unused (a racing PUT won the
 * external id, or the budget ran out). After an insert the store did not confirm, the reservation
 * stays open for a reader to settle once it expires.
 */
async function insertNew(
  ctx: RequestContext,
  draft: NewProduct,
  read: ProductSequence | undefined,
): Promise<InsertOutcome> {
  const ids = new ProductIds(ctx, draft.store_id, read);
  const outcome = await ids.insert([draft]);
  await ids.finish();
  return outcome;
}

/**
 * A product from a whole draft, outside a request (tests; the local seed inserts a group at a
 * time with ProductIds): the single insert path with the store's sequence read first. Its
 * external id, if any, must be new.
 */
export async function insertProduct(ctx: RequestContext, draft: NewProduct): Promise<Product> {
  const created = createdOrTaken(await insertNew(ctx, draft, undefined), `product ${draft.name}`);
  if (created.kind === 'taken') throw new Error(`external id ${draft.external_id} is taken`);
  return created.product;
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
 * external id of this key is refused `not_found` (404).
 */
export async function patchProduct(
  ctx: RequestContext,
  caller: Caller,
  externalId: string,
  patch: ProductPatch,
  condition: WriteCondition = {},
): Promise<WriteOutcome | Refused> {
  const targets = await resolveWriteTargets(
    ctx,
    caller.keyId,
    externalId,
    patch.category_external_ids,
    patch.tag_external_ids,
  );
  return patchResolved(ctx, caller, patch, targets, condition, HOT_ITEM_BOUND);
}

/** `patchProduct` once the write's targets are known (an unknown product is 404 before any condition; `bound` as for `putResolved`). */
export async function patchResolved(
  ctx: RequestContext,
  caller: Caller,
  patch: ProductPatch,
  targets: WriteTargets,
  condition: WriteCondition = {},
  bound: ContentionBound = BUDGET_ONLY,
): Promise<WriteOutcome | Refused> {
  if (targets.productId === undefined) return productNotFound();
  const unknown = unknownReference(targets, patch.category_external_ids, patch.tag_external_ids);
  if (unknown) return unknown;
  const change: ProductChange = { ...patch };
  if (patch.category_external_ids !== undefined) change.category_ids = targets.categoryIds;
  const written = await applyToExisting(ctx, caller, targets.productId, change, targets.product, condition, bound);
  // Gone since its targets were read: no product to patch.
  return written ?? productNotFound();
}

/**
 * Applies a write to the latest state of product `id` (PUT and PATCH alike), starting from
 * `known` (the link's copy) when there is one; undefined if the product is gone. Each round
 * decides from the state it has (the domain's `applyProductChange`; a new offer id first when
 * the product has no variant) and commits guarded on it; a round that meets a racing write
 * reads the product again and decides again, so the last round's answer is what was committed:
 * a change (updated) or nothing to change (unchanged). A round lost on the guard gets the product
 * back from the failed condition and decides again from it without a read; only a transaction
 * conflict (no state handed back) makes the next round read the product item. A lost round waits
 * a full-jitter backoff first, and a write past its `bound` is refused retryably, having written
 * nothing (ContentionBound in ./contention.ts). If the link's copy
 * is behind the product (written by an older version), the guard fails and hands back the product.
 * The write's condition is checked in each round against the state that round decides from, so
 * a racing write that commits between the check and the commit makes the round stale, and the
 * next round checks again on what that write left (If-Match then fails: exactly one of many
 * writers holding the same ETag gets through).
 */
async function applyToExisting(
  ctx: RequestContext,
  caller: Caller,
  id: number,
  change: ProductChange,
  known: Product | undefined,
  condition: WriteCondition,
  bound: ContentionBound,
): Promise<WriteOutcome | Refused | undefined> {
  const storeId = caller.storeId;
  return retryOnStale<Product | undefined, WriteOutcome | undefined>({
    budget: ctx,
    what: `product ${id} of store ${storeId}`,
    ...(known ? { initial: known } : {}),
    bound,
    read: () => getProduct(ctx, storeId, id),
    round: async (current) => {
      if (!current) return done(undefined);
      const failed = failedCondition(condition, productChecksum(current));
      if (failed) return done({ result: 'precondition_failed', header: failed });
      // A dry run moves no counter: the offer id a new variant would take is unknown.
      const offerId = needsNewOffer(current, change)
        ? ctx.dryRun
          ? UNKNOWN_ID
          : await reserveOfferId(ctx, storeId)
        : undefined;
      const next = applyProductChange(current, change, nowIso(), offerId);
      if (!next) return done({ product: current, result: 'unchanged' });
      if (ctx.dryRun) return done({ product: next, result: 'updated' });
      const commit = await commitProductChange(
        ctx,
        current,
        next,
        productEvent('product.updated', next, keyOrigin(caller.keyId), current),
      );
      if (commit.kind === 'committed') return done({ product: commit.product, result: 'updated' });
      // The failed condition hands back the product as the winner left it (not after a
      // transaction conflict): the next round decides from it without a read.
      return stale(commit.current);
    },
  });
}

/**
 * The refusal of a write that names a category or tag this key does not have (422
 * `unknown_reference` naming the array element, e.g. `category_external_ids[1]`); undefined when
 * every reference exists.
 */
function unknownReference(
  targets: WriteTargets,
  categoryIds: string[] = [],
  tagIds: string[] = [],
): Refused | undefined {
  const missing = targets.missing;
  if (!missing) return undefined;
  const list = missing.list === 'category' ? 'category_external_ids' : 'tag_external_ids';
  const value = (missing.list === 'category' ? categoryIds : tagIds)[missing.index];
  const resource = missing.list === 'category' ? 'categories' : 'tags';
  return refused(
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
export async function reindexProductNames(
  ctx: RequestContext,
  storeId: string,
): Promise<{ store_id: string; products: number }> {
  const sequence = await readProductSequence(ctx, storeId);
  const last = sequence.last;
  for (let from = 1; from <= last; from += REINDEX_CHUNK) {
    const ids = Array.from({ length: Math.min(REINDEX_CHUNK, last - from + 1) }, (_, i) => from + i);
    for (let attempt = 1; !(await markNamesPending(ctx, await getProductsByIds(ctx, storeId, ids, true))); attempt++) {
      if (attempt >= 50) throw new Error(`store ${storeId}: products ${from}..${from + ids.length - 1} kept changing`);
    }
  }
  return { store_id: storeId, products: productCount(await settledSequence(ctx, storeId, sequence)) };
}

/** A dry run's "before" (docs/api.md#dry-runs): the product this key's external id addresses, as a write answers it. */
export async function currentMappedProduct(
  ctx: RequestContext,
  caller: Caller & { currency: string | null },
  externalId: string,
  includeOffers: boolean,
) {
  const product = await productByExternalId(ctx, caller.storeId, caller.keyId, externalId);
  return product && toMappedProduct(product, caller.currency, includeOffers);
}
