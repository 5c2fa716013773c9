import { randomUUID } from 'node:crypto';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../core/client.ts';
import { namedTransaction } from '../core/helpers.ts';
import { newLinkWrite, productItem, readLink } from './item.ts';
import { eventPut } from '../event/item.ts';
import { groupIndexWrites } from './index.repo.ts';
import { closeReservations, productSequenceMove, type ProductSequence, type Reservation } from '../core/sequence.ts';
import type { Product } from '#domain/product/product.ts';
import type { StoreEvent } from '#domain/event/event.ts';
import { backoff, RoundClock, remainingMs, withGrace } from '#domain/time.ts';
import { errorFields, log } from '#shared/log.ts';
import { DomainError } from '#domain/errors.ts';

/**
 * The insert transaction of new products, numbered and with their events by the use case
 * (shared/app/product-writes.ts for a single PUT, shared/app/product-ids.ts for a batch): one
 * TransactWriteItems holds each product, its external-id link and copy (guarded: one product
 * per external id, however many writes race), its SKU links and pending name, its event, and
 * on the uncontended path the sequence move guarded on the state the use case read.
 */

/**
 * Past the request's budget (shared/http/instrument.ts keeps 4 s before API Gateway's 29 s):
 * finding out what an unanswered insert did, then closing the request's id reservations.
 */
const SETTLE_GRACE_MS = 1_500;
const BOOKKEEPING_GRACE_MS = 1_500;

/**
 * Products per insert transaction, at most 100 actions: per product itself, its map, SKU link,
 * pending name and its event (5), and on the guarded path the sequence move (1).
 */
export const INSERT_GROUP_SIZE = 19;
/** ... with ids reserved before it: no sequence move in the transaction, so one product more. */
export const RESERVED_INSERT_GROUP_SIZE = 20;

/** The link that won an external id: the product id, and the product when the link carries its copy. */
export type Winner = { productId: number | undefined; product: Product | undefined };

/**
 * How one insert transaction ended. `external_id_taken`: a racing write created one of the
 * external ids first (its link, with the winner's copy when the store returned it); `lost`: the
 * guarded sequence moved or the transaction conflicted; `out_of_time`: the request's budget
 * cannot hold another attempt. In every case but `inserted` and `undetermined` nothing was written.
 */
export type InsertOutcome =
  | { kind: 'inserted'; products: Product[] }
  | { kind: 'external_id_taken'; winner: Winner }
  /** `unknown`: a store error left open whether it landed. */
  | { kind: 'lost'; unknown?: true }
  | { kind: 'out_of_time' }
  /** The store answered neither the transaction nor its re-sends in time: it may or may not have landed. */
  | { kind: 'undetermined' };

/**
 * One transaction that inserts `products` with the ids they carry and their `events`; with
 * `guard`, also moves the sequence from that state (the uncontended path).
 */
async function commitInsert(
  storeId: string,
  products: readonly Product[],
  events: readonly StoreEvent[],
  guard: ProductSequence | undefined,
  token: string,
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
    ['events', events.map(eventPut)],
  ]);
  try {
    await db().send(new TransactWriteCommand({ TransactItems: tx.items, ClientRequestToken: token }));
    return { kind: 'inserted', products: [...products] };
  } catch (err) {
    // A store error (DynamoDB Local's lock timeout among them) leaves the outcome open: a guarded
    // insert retries with new ids, whose link guard finds its own product if it did land; a
    // reserved one retries with the same token, which answers success if it did.
    if (err instanceof Error && err.name === 'InternalServerError') return { kind: 'lost', unknown: true };
    // Abandoned when the budget ended, or the store did not answer: it may still land.
    if (err instanceof DomainError && err.code === 'service_unavailable') return { kind: 'lost', unknown: true };
    const cancelled = tx.cancelledBy(err);
    if (!cancelled) throw err;
    if (cancelled.failed('links')) return { kind: 'external_id_taken', winner: readLink(cancelled.item('links')) };
    if (cancelled.failed('products') && !guard)
      throw new Error(`store ${storeId}: a reserved product id already holds a product`);
    return { kind: 'lost' };
  }
}

/**
 * The uncontended path: one attempt, the products numbered from the sequence state `read` and
 * the transaction guarded on it. `lost` when another insert moved the sequence first.
 */
export async function insertGuarded(
  storeId: string,
  products: readonly Product[],
  events: readonly StoreEvent[],
  read: ProductSequence,
  clock = new RoundClock(),
): Promise<InsertOutcome> {
  if (!clock.canStart()) return { kind: 'out_of_time' };
  const token = randomUUID();
  const outcome = await clock.time(() => commitInsert(storeId, products, events, read, token));
  return outcome.kind === 'lost' && outcome.unknown
    ? settle(() => commitInsert(storeId, products, events, read, token))
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
 * Inserts products numbered with ids this request reserved: no sequence in the transaction, so
 * only a conflict on the same items (a racing write of the same external id) makes it send the
 * same items again. Never `lost`. No attempt starts at or after `usableUntil` (the reservation's,
 * see shared/db/core/sequence.ts).
 */
export async function insertReserved(
  storeId: string,
  products: readonly Product[],
  events: readonly StoreEvent[],
  usableUntil: number,
  clock = new RoundClock(),
): Promise<InsertOutcome> {
  // A retry after a store error keeps the token, so a commit whose answer was lost answers success.
  let token = randomUUID();
  for (let attempt = 1; ; attempt++) {
    // Past `usableUntil` a reader may soon settle the reservation from what exists: nothing may land after.
    if (!clock.canStart() || Date.now() >= usableUntil) return { kind: 'out_of_time' };
    const outcome = await clock.time(() => commitInsert(storeId, products, events, undefined, token));
    if (outcome.kind !== 'lost') return outcome;
    const sent = token;
    // No budget left to retry in, and the last answer never came: find out what it did.
    if (outcome.unknown && !clock.canStart())
      return settle(() => commitInsert(storeId, products, events, undefined, sent));
    if (!outcome.unknown) token = randomUUID();
    // Outside a request budget (scripts) the attempts are bounded here.
    if (attempt >= 50 && remainingMs() === Number.POSITIVE_INFINITY) return { kind: 'out_of_time' };
    await backoff(attempt);
  }
}

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
  storeId: string,
  closed: readonly Reservation[],
  gaps: readonly number[],
): Promise<void> {
  if (closed.length === 0 && gaps.length === 0) return;
  try {
    await withGrace(BOOKKEEPING_GRACE_MS, () => closeReservations(storeId, closed, gaps));
  } catch (err) {
    log('warn', 'product id reservations left open', {
      store_id: storeId,
      reservations: closed.map((r) => r.attribute),
      gap_ids: gaps,
      ...errorFields(err),
    });
  }
}
