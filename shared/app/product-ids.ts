import { insertGuarded, insertReserved, recordUnusedIds, type InsertOutcome } from '#db/product/insert.repo.ts';
import { readProductSequence, reserveProductIds, type ProductSequence, type ReservedIds } from '#db/core/sequence.ts';
import { productEvent } from '#domain/event/product.ts';
import type { Product } from '#domain/product/product.ts';
import { numbered, offerCount, type NewProduct } from '#domain/product/product-write.ts';
import { RoundClock } from '#domain/time.ts';
import { log } from '#shared/log.ts';

/**
 * Where the new products of a request that inserts many (a batch, the bench's seed) get their
 * ids: first from the sequence state it read (the guarded, gap-free path), and once that guard
 * has lost a race, from one block reserved by ADD for all the products the request may still
 * create (`expected`), so the rest of the request never races on the sequence again. The
 * products are numbered and their `product.created` events built here, then committed by
 * shared/db/product/insert.repo.ts. Ids it reserved and did not use are recorded as gaps by
 * `finish`, which every request that took ids must call. A single PUT does not need this: it
 * inserts one product on its own path (shared/app/product-writes.ts).
 */
export class ProductIds {
  private guarded: ProductSequence | undefined;
  private block: { nextId: number; endId: number; nextOffer: number } | undefined;
  private readonly unused: number[] = [];
  /** One clock for the request: what its first inserts took tells whether the next one fits. */
  private readonly clock = new RoundClock();

  constructor(
    private readonly storeId: string,
    read: ProductSequence | undefined,
  ) {
    this.guarded = read;
  }

  /**
   * Inserts `drafts` in one transaction. `expected`: how many new products the request may
   * still insert with this one included, and their offers (the size of the block to reserve).
   */
  async insert(
    drafts: readonly NewProduct[],
    expected: { products: number; offers: number } = { products: drafts.length, offers: offerCount(drafts) },
  ): Promise<InsertOutcome> {
    if (!this.block) {
      this.guarded ??= await readProductSequence(this.storeId);
      const read = this.guarded;
      const products = numbered(drafts, read.last + 1, read.offers + 1);
      const first = await insertGuarded(this.storeId, products, created(products), read, this.clock);
      if (first.kind === 'inserted')
        this.guarded = { ...read, last: read.last + drafts.length, offers: read.offers + offerCount(drafts) };
      if (first.kind !== 'lost') return first;
      if (!this.clock.canStart()) return { kind: 'out_of_time' };
      const reserved = await reserveProductIds(this.storeId, expected.products, expected.offers);
      this.block = {
        nextId: reserved.firstId,
        endId: reserved.firstId + expected.products,
        nextOffer: reserved.firstOffer,
      };
    }
    const block = this.block;
    if (block.endId - block.nextId < drafts.length) {
      // More than announced (a fallback write after a group): reserve what this insert needs.
      const more = await reserveProductIds(this.storeId, drafts.length, offerCount(drafts));
      return this.use(drafts, more);
    }
    const ids = { firstId: block.nextId, firstOffer: block.nextOffer };
    block.nextId += drafts.length;
    block.nextOffer += offerCount(drafts);
    return this.use(drafts, ids);
  }

  private async use(drafts: readonly NewProduct[], ids: ReservedIds): Promise<InsertOutcome> {
    const products = numbered(drafts, ids.firstId, ids.firstOffer);
    const outcome = await insertReserved(this.storeId, products, created(products), this.clock);
    if (outcome.kind === 'undetermined')
      log('error', 'product insert undetermined', { store_id: this.storeId, ids: products.map((p) => p.id) });
    else if (outcome.kind !== 'inserted') this.unused.push(...products.map((p) => p.id));
    return outcome;
  }

  /** Records the reserved ids that hold no product (the rest of the block included), never failing the request. */
  async finish(): Promise<void> {
    if (this.block) {
      for (let id = this.block.nextId; id < this.block.endId; id++) this.unused.push(id);
      this.block.nextId = this.block.endId;
    }
    await recordUnusedIds(this.storeId, this.unused.splice(0));
  }
}

/** The event each new product raises, committed in its insert transaction. */
const created = (products: readonly Product[]) => products.map((p) => productEvent('product.created', p));
