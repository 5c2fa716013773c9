import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../core/client.ts';
import { type Item, namedTransaction } from '../core/helpers.ts';
import { newLinkWrite, productItem } from './item.ts';
import { productEventPut } from '../event/item.ts';
import { groupIndexWrites } from './index.repo.ts';
import {
  productSequenceMove,
  recordGaps,
  reserveProductIds,
  type ProductSequence,
  type ReservedIds,
} from '../core/sequence.ts';
import type { Offer, Product } from '#domain/product/product.ts';
import { backoff, RoundClock, remainingMs, withGrace } from '#domain/time.ts';
import { errorFields, log } from '#shared/log.ts';
import { DomainError } from '#domain/errors.ts';

export type NewProduct = Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] };

/**
 * Past the request's budget (shared/http/instrument.ts keeps 4 s before API Gateway's 29 s):
 * finding out what an unanswered insert did, then recording the ids the request did not use.
 */
const SETTLE_GRACE_MS = 1_500;
const BOOKKEEPING_GRACE_MS = 1_500;

/** Products per insert transaction: at most 100 actions (the sequence, then per product: itself, its map, SKU link, pending name, its event). */
export const INSERT_GROUP_SIZE = 19;

/**
 * How one insert transaction ended. `external_id_taken`: a racing write created one of the
 * external ids first (its link, with the winner's copy when the store returned it); `lost`: the
 * guarded sequence moved or the transaction conflicted; `out_of_time`: the request's budget
 * cannot hold another attempt. In every case but `inserted` and `undetermined` nothing was written.
 */
export type InsertOutcome =
  | { kind: 'inserted'; products: Product[] }
  | { kind: 'external_id_taken'; winner: Item | undefined }
  /** `unknown`: a store error left open whether it landed. */
  | { kind: 'lost'; unknown?: true }
  | { kind: 'out_of_time' }
  /** The store answered neither the transaction nor its re-sends in time: it may or may not have landed. */
  | { kind: 'undetermined' };

const offerCount = (drafts: readonly NewProduct[]) => drafts.reduce((n, d) => n + d.offers.length, 0);

/** The drafts with consecutive ids from `firstId` and offer ids from `firstOffer`. */
export function numbered(drafts: readonly NewProduct[], firstId: number, firstOffer: number): Product[] {
  let nextOffer = firstOffer;
  return drafts.map((d, i) => ({ ...d, id: firstId + i, offers: d.offers.map((o) => ({ ...o, id: nextOffer++ })) }));
}

/**
 * One transaction that inserts `products` with the ids they carry: each with its external-id
 * link and copy (guarded: one product per external id, however many writes race), its SKU links
 * and pending name; with `guard`, also moves the sequence from that state (the uncontended path).
 */
async function commitInsert(
  storeId: string,
  products: Product[],
  guard?: ProductSequence,
  token?: string,
): Promise<InsertOutcome> {
  const offers = products.reduce((n, p) => n + p.offers.length, 0);
  const tx = namedTransaction([
    ['sequence', guard && productSequenceMove(storeId, guard, products.length, offers)],
    ['links', products.flatMap((p) => newLinkWrite(p) ?? [])],
    [
      'products',
      products.map((p) => ({
        Put: { TableName: tableName(), Item: productItem(p), ConditionExpression: 'attribute_not_exists(pk)' },
      })),
    ],
    ['index', groupIndexWrites(products)],
    ['events', products.map((p) => productEventPut('product.created', p))],
  ]);
  try {
    await db().send(
      new TransactWriteCommand({ TransactItems: tx.items, ...(token ? { ClientRequestToken: token } : {}) }),
    );
    return { kind: 'inserted', products };
  } catch (err) {
    // A store error (DynamoDB Local's lock timeout among them) leaves the outcome open: a guarded
    // insert retries with new ids, whose link guard finds its own product if it did land; a
    // reserved one retries with the same token, which answers success if it did.
    if (err instanceof Error && err.name === 'InternalServerError') return { kind: 'lost', unknown: true };
    // Abandoned when the budget ended, or the store did not answer: it may still land.
    if (err instanceof DomainError && err.code === 'service_unavailable') return { kind: 'lost', unknown: true };
    const cancelled = tx.cancelledBy(err);
    if (!cancelled) throw err;
    if (cancelled.failed('links')) return { kind: 'external_id_taken', winner: cancelled.item('links') };
    if (cancelled.failed('products') && !guard)
      throw new Error(`store ${storeId}: a reserved product id already holds a product`);
    return { kind: 'lost' };
  }
}

/** The uncontended path: one attempt with ids from the sequence state read, guarded on it. */
export async function insertGuarded(
  storeId: string,
  drafts: readonly NewProduct[],
  read: ProductSequence,
  clock = new RoundClock(),
): Promise<InsertOutcome> {
  if (!clock.canStart()) return { kind: 'out_of_time' };
  const products = numbered(drafts, read.last + 1, read.offers + 1);
  const token = randomUUID();
  const outcome = await clock.time(() => commitInsert(storeId, products, read, token));
  return outcome.kind === 'lost' && outcome.unknown
    ? settle(() => commitInsert(storeId, products, read, token))
    : outcome;
}

/**
 * The outcome of a transaction whose answer never came (abandoned at the end of the budget, or a
 * store error), found by sending it again, same token and items, within a short budget of its
 * own: a commit that landed answers success (the token), or its own link refuses the copy (an
 * `external_id_taken` whose winner is this very product, which the single write then finds);
 * one that did not land commits now or is refused as any attempt is. Never a guess: what stays
 * unknown is `undetermined`, and the request says so instead of "nothing was written".
 */
async function settle(resend: () => Promise<InsertOutcome>): Promise<InsertOutcome> {
  return withGrace(SETTLE_GRACE_MS, async () => {
    for (let attempt = 1; remainingMs() > 0; attempt++) {
      const outcome = await resend();
      if (!(outcome.kind === 'lost' && outcome.unknown)) return outcome;
      await backoff(attempt);
    }
    return { kind: 'undetermined' };
  });
}

/**
 * Inserts with ids this request reserved: no sequence in the transaction, so only a conflict on
 * the same items (a racing write of the same external id) can make it retry, with the same ids.
 */
export async function insertReserved(
  storeId: string,
  drafts: readonly NewProduct[],
  ids: ReservedIds,
  clock = new RoundClock(),
): Promise<InsertOutcome> {
  const products = numbered(drafts, ids.firstId, ids.firstOffer);
  // A retry after a store error keeps the token, so a commit whose answer was lost answers success.
  let token = randomUUID();
  for (let attempt = 1; ; attempt++) {
    if (!clock.canStart()) return { kind: 'out_of_time' };
    const outcome = await clock.time(() => commitInsert(storeId, products, undefined, token));
    if (outcome.kind !== 'lost') return outcome;
    const sent = token;
    // No budget left to retry in, and the last answer never came: find out what it did.
    if (outcome.unknown && !clock.canStart()) return settle(() => commitInsert(storeId, products, undefined, sent));
    if (!outcome.unknown) token = randomUUID();
    // Outside a request budget (scripts) the attempts are bounded here.
    if (attempt >= 50 && remainingMs() === Number.POSITIVE_INFINITY) return { kind: 'out_of_time' };
    await backoff(attempt);
  }
}

/**
 * Where one request's new products get their ids: first from the sequence state it read (the
 * guarded, gap-free path: three round trips for a PUT), and once that guard has lost a race, from
 * one block reserved by ADD for all the products the request may still create (`expected`), so
 * the rest of the request never races on the sequence again. Ids it reserved and did not use are
 * recorded as gaps by `finish`, which every request that took ids must call.
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
    private readonly readSequence: () => Promise<ProductSequence>,
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
      this.guarded ??= await this.readSequence();
      const first = await insertGuarded(this.storeId, drafts, this.guarded, this.clock);
      if (first.kind === 'inserted') {
        this.guarded = {
          ...this.guarded,
          last: this.guarded.last + drafts.length,
          offers: this.guarded.offers + offerCount(drafts),
        };
      }
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
    const outcome = await insertReserved(this.storeId, drafts, ids, this.clock);
    if (outcome.kind === 'undetermined')
      log('error', 'product insert undetermined', {
        store_id: this.storeId,
        ids: drafts.map((_, i) => ids.firstId + i),
      });
    else if (outcome.kind !== 'inserted') this.unused.push(...drafts.map((_, i) => ids.firstId + i));
    return outcome;
  }

  /**
   * Records the reserved ids that hold no product (the rest of the block included). It runs after
   * the request's inserts, so it has a short budget of its own (a long batch may have spent the
   * request's), and it never fails the request: the inserts landed and are answered as such. A
   * gap it cannot record leaves the store's `total` one too high (docs/catalog-writes.md), and
   * an error line naming the ids.
   */
  async finish(): Promise<void> {
    if (this.block) {
      for (let id = this.block.nextId; id < this.block.endId; id++) this.unused.push(id);
      this.block.nextId = this.block.endId;
    }
    const ids = this.unused.splice(0);
    if (ids.length === 0) return;
    try {
      await withGrace(BOOKKEEPING_GRACE_MS, () => recordGaps(this.storeId, ids));
    } catch (err) {
      log('error', 'product id gaps not recorded', { store_id: this.storeId, gap_ids: ids, ...errorFields(err) });
    }
  }
}
