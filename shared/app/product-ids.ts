import type { RequestContext } from '#shared/context.ts';
import { randomUUID } from 'node:crypto';
import {
  INSERT_GROUP_SIZE,
  insertProducts,
  RESERVED_INSERT_GROUP_SIZE,
  type InsertAttempt,
} from '#db/product/insert.repo.ts';
import {
  closeReservations,
  readProductSequence,
  reservedIds,
  reserveProductIds,
  usableUntil,
  type ProductSequence,
  type Reservation,
  type ReservedIds,
} from '#db/core/sequence.ts';
import { existingProductIds } from '#db/product/repo.ts';
import { productEvent } from '#domain/event/product.ts';
import type { Product } from '#domain/product/product.ts';
import { numbered, offerCount, type NewProduct } from '#domain/product/product-write.ts';
import type { StoreEvent } from '#domain/event/event.ts';
import { withGrace } from '#domain/time.ts';
import { errorFields, log } from '#shared/log.ts';
import { attemptOnce, attemptUntilWon, RoundClock, type OutOfTime, type Undetermined } from './contention.ts';

/**
 * Where the new products of a request that inserts many (a batch, the bench's seed) get their
 * ids: from one block reserved for all of them when they take several transactions
 * (`reserveAll`); otherwise first from the sequence state it read (the guarded, gap-free path),
 * and once that guard has lost a race, from one block reserved for all the products the request
 * may still create (`expected`), so the rest of the request never races on the sequence again. The products are
 * numbered and their `product.created` events built here, then committed by
 * shared/db/product/insert.repo.ts, one attempt at a time. `finish`, which every request that took ids must call,
 * closes its reservations with the ids it did not use. A single PUT takes its one product's id
 * here too (`insertNew`, shared/app/product-writes.ts), from the sequence its write read.
 */
export class ProductIds {
  private guarded: ProductSequence | undefined;
  private block: { nextId: number; endId: number; nextOffer: number; reservation: Reservation } | undefined;
  private readonly reservations: Reservation[] = [];
  /** Reserved ids whose insert landed; every other reserved id holds no product, but for: */
  private readonly landed = new Set<number>();
  /** Reserved ids whose insert the store did not confirm: their reservation stays open for a reader to settle. */
  private readonly undetermined = new Set<number>();
  /** One clock for the request: what its first inserts took tells whether the next one fits. */
  private readonly clock: RoundClock;

  constructor(
    private readonly ctx: RequestContext,
    private readonly storeId: string,
    read: ProductSequence | undefined,
  ) {
    this.guarded = read;
    this.clock = new RoundClock(ctx);
  }

  /**
   * Reserves the ids of `expected` new products (and their offers) in one block before any insert,
   * for a request that inserts them in several transactions (a batch of more than one group): no
   * transaction then holds the sequence item, so none races the store's other writers on it or is
   * spent on a guard that lost. Nothing when the budget cannot hold a round (the first insert then
   * takes the guarded path, which checks the budget again) or a block is already held.
   */
  async reserveAll(expected: { products: number; offers: number }): Promise<void> {
    // A dry run reserves nothing: it numbers every product from the sequence state read.
    if (this.block || expected.products === 0 || this.ctx.dryRun || !this.clock.canStart()) return;
    await this.reserveBlock(expected);
  }

  /**
   * Products one `insert` may hold: 20 once the request holds a reserved block (no sequence move
   * in the transaction), 19 on the guarded path.
   */
  get groupSize(): number {
    return this.block ? RESERVED_INSERT_GROUP_SIZE : INSERT_GROUP_SIZE;
  }

  /**
   * Inserts `drafts` (at most `groupSize`) in one transaction. `expected`: how many new products
   * the request may still insert with this one included, and their offers (the size of the block
   * to reserve).
   */
  async insert(
    drafts: readonly NewProduct[],
    expected: { products: number; offers: number } = { products: drafts.length, offers: offerCount(drafts) },
  ): Promise<InsertOutcome> {
    if (!this.block) {
      this.guarded ??= await readProductSequence(this.ctx, this.storeId);
      const read = this.guarded;
      const products = numbered(drafts, read.last + 1, read.offers + 1);
      // The uncontended path: one attempt guarded on the sequence state read (settled when its
      // answer never came); `lost` when another insert moved the sequence first.
      const events = created(products);
      const token = randomUUID();
      // A dry run writes nothing: the products as this insert would number them (it never loses,
      // so it takes no reserved block either).
      const first = this.ctx.dryRun
        ? ({ kind: 'inserted', products } as const)
        : await attemptOnce(this.ctx, this.clock, (ctx) =>
            insertProducts(ctx, this.storeId, products, events, read, token),
          );
      if (first.kind === 'inserted')
        this.guarded = { ...read, last: read.last + drafts.length, offers: read.offers + offerCount(drafts) };
      if (first.kind !== 'lost') return first;
      if (!this.clock.canStart()) return { kind: 'out_of_time' };
      await this.reserveBlock(expected);
    } else if (Date.now() >= usableUntil(this.block.reservation)) {
      // Only work that runs longer than any request (the bench's seed): the rest of the block
      // goes unused and a fresh one takes over, so no insert lands after its reservation expires.
      await this.reserveBlock(expected);
    }
    const block = this.block as NonNullable<typeof this.block>;
    if (block.endId - block.nextId < drafts.length) {
      // More than announced (a fallback write after a group): reserve what this insert needs.
      return this.use(drafts, await this.reserve(drafts.length, offerCount(drafts)));
    }
    const ids = { firstId: block.nextId, firstOffer: block.nextOffer, reservation: block.reservation };
    block.nextId += drafts.length;
    block.nextOffer += offerCount(drafts);
    return this.use(drafts, ids);
  }

  private async reserve(products: number, offers: number): Promise<ReservedIds> {
    const ids = await reserveProductIds(this.ctx, this.storeId, products, offers);
    this.reservations.push(ids.reservation);
    return ids;
  }

  private async reserveBlock(expected: { products: number; offers: number }): Promise<void> {
    const reserved = await this.reserve(expected.products, expected.offers);
    this.block = {
      nextId: reserved.firstId,
      endId: reserved.firstId + expected.products,
      nextOffer: reserved.firstOffer,
      reservation: reserved.reservation,
    };
  }

  private async use(drafts: readonly NewProduct[], ids: ReservedIds): Promise<InsertOutcome> {
    const products = numbered(drafts, ids.firstId, ids.firstOffer);
    const outcome = await insertReserved(
      this.ctx,
      this.storeId,
      products,
      created(products),
      usableUntil(ids.reservation),
      this.clock,
    );
    const taken = products.map((p) => p.id);
    if (outcome.kind === 'undetermined') {
      log('error', 'product insert undetermined', { store_id: this.storeId, ids: taken });
      for (const id of taken) this.undetermined.add(id);
    } else if (outcome.kind === 'inserted') for (const id of taken) this.landed.add(id);
    return outcome;
  }

  /**
   * Closes the request's reservations with the ids that hold no product (every reserved id whose
   * insert did not land, the rest of the block included), in one write, never failing the request.
   * A reservation holding an id whose insert the store did not confirm stays open (its known gaps
   * are recorded): a reader settles it once it expires, from the products that exist.
   */
  async finish(): Promise<void> {
    if (this.block) this.block.nextId = this.block.endId;
    const closed: Reservation[] = [];
    const gaps: number[] = [];
    for (const r of this.reservations.splice(0)) {
      const ids = reservedIds(r);
      gaps.push(...ids.filter((id) => !this.landed.has(id) && !this.undetermined.has(id)));
      if (!ids.some((id) => this.undetermined.has(id))) closed.push(r);
    }
    this.landed.clear();
    this.undetermined.clear();
    await closeRequestReservations(this.ctx, this.storeId, closed, gaps);
  }
}

/**
 * How inserting a group of products ended: the store's answer to its transaction, or
 * `out_of_time` (the budget could not hold another attempt; nothing more was sent) or
 * `undetermined` (the store answered neither it nor its re-sends in time: it may have landed).
 * In every case but `inserted` and `undetermined` nothing was written.
 */
export type InsertOutcome = Exclude<InsertAttempt, { kind: 'unanswered' }> | OutOfTime | Undetermined;

/**
 * Inserts products numbered with ids this request reserved: no sequence in the transaction, so
 * only a conflict on the same items (a racing write of the same external id) makes it send them
 * again. No attempt starts at or after `usableUntil` (the reservation's, see
 * shared/db/core/sequence.ts): past it a reader may soon settle the reservation from what exists.
 */
export function insertReserved(
  ctx: RequestContext,
  storeId: string,
  products: readonly Product[],
  events: readonly StoreEvent[],
  usableUntil: number,
  clock = new RoundClock(ctx),
): Promise<InsertOutcome> {
  return attemptUntilWon(ctx, clock, usableUntil, (ctx, token) =>
    insertProducts(ctx, storeId, products, events, undefined, token),
  );
}

/**
 * Past the request's budget (shared/http/instrument.ts keeps 4 s before API Gateway's 29 s):
 * closing the request's id reservations.
 */
const BOOKKEEPING_GRACE_MS = 1_500;

/**
 * Closes the request's id reservations (docs/catalog-writes.md, "Ids under contention"): one
 * UpdateItem adds the reserved ids that hold no product (`gaps`) and removes the reservations
 * (`closed`); a reservation left open (an insert whose outcome is unknown) is settled by a reader
 * once it expires. It runs after the request's inserts, so it has a short budget of its own (a
 * long batch may have spent the request's), and it never fails the request: the inserts landed
 * and are answered as such. If the write fails, the reservations stay open and a reader settles
 * them after expiry.
 */
export async function closeRequestReservations(
  ctx: RequestContext,
  storeId: string,
  closed: readonly Reservation[],
  gaps: readonly number[],
): Promise<void> {
  if (closed.length === 0 && gaps.length === 0) return;
  try {
    await closeReservations(withGrace(ctx, BOOKKEEPING_GRACE_MS), storeId, closed, gaps);
  } catch (err) {
    log('warn', 'product id reservations left open', {
      store_id: storeId,
      reservations: closed.map((r) => r.attribute),
      gap_ids: gaps,
      ...errorFields(err),
    });
  }
}

/** The event each new product raises, committed in its insert transaction. */
const created = (products: readonly Product[]) => products.map((p) => productEvent('product.created', p));

/**
 * The product sequence with every reservation past its expiry settled (docs/catalog-writes.md,
 * "Ids under contention"): for whoever reads the count. Its holder is gone or could not tell
 * whether an insert landed, and no insert with its ids can land any more, so its ids that hold a
 * product (one strongly consistent BatchGetItem) are products and the others gaps; one UpdateItem
 * records those and closes it (the same write a holder makes, so readers racing to settle agree).
 * Without an expired reservation it costs nothing. The answer holds even if that write fails.
 */
export async function settledSequence(
  ctx: RequestContext,
  storeId: string,
  sequence: ProductSequence,
  now: number = Date.now(),
): Promise<ProductSequence> {
  const expired = sequence.open.filter((r) => r.expiresAt <= now);
  if (expired.length === 0) return sequence;
  const ids = expired.flatMap(reservedIds);
  const existing = await existingProductIds(ctx, storeId, ids);
  const gaps = ids.filter((id) => !existing.has(id));
  try {
    await closeReservations(ctx, storeId, expired, gaps);
  } catch (err) {
    log('warn', 'expired product id reservations not closed', {
      store_id: storeId,
      gap_ids: gaps,
      ...errorFields(err),
    });
  }
  return {
    ...sequence,
    gaps: [...new Set([...sequence.gaps, ...gaps])].sort((a, b) => a - b),
    open: sequence.open.filter((r) => r.expiresAt > now),
  };
}
