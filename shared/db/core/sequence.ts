import type { RequestContext } from '#shared/context.ts';
import { randomUUID } from 'node:crypto';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Key, keys } from '../keys.ts';
import { send, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import type { Item, TransactItem } from './helpers.ts';

/**
 * Counter items (`value` = the last id handed out, absent = 0), taken one of two ways:
 * - `nextInSequence`: one atomic ADD, no read first. Ids ascend but may have gaps when the write
 *   that uses them fails; lists over them are cursor-based.
 * - read (`sequenceValue`, often inside a write's BatchGetItem) and move it in the write's own
 *   transaction (`sequenceMove`), guarded on the value read: no extra round trip and no gap; a
 *   concurrent taker makes the guard fail and the write reads again and takes the next id.
 */
export async function nextInSequence(ctx: RequestContext, key: Key): Promise<number> {
  const out = await send(
    ctx,
    new UpdateCommand({
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'ADD #v :one SET #t = :type',
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': ENTITY.sequence },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.value);
}

/** The value a counter item holds; 0 when it was never written. */
export const sequenceValue = (item: Item | undefined): number => Number(item?.value ?? 0);

/** A counter item as stored (strongly consistent), for sequences that keep more than one counter. */
export async function readSequenceItem(ctx: RequestContext, key: Key): Promise<Item | undefined> {
  return (await send(ctx, new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;
}

export const readSequence = async (ctx: RequestContext, key: Key): Promise<number> =>
  sequenceValue(await readSequenceItem(ctx, key));

/** A condition that the counter attribute `attr` still holds `value` (0 also when it was never written). */
export const unchangedCounter = (attr: string, placeholder: string, value: number) =>
  value === 0 ? `(attribute_not_exists(${attr}) OR ${attr} = ${placeholder})` : `${attr} = ${placeholder}`;

/** The transaction item that moves the counter from `read` to `next`, only if no one else moved it. */
export function sequenceMove(key: Key, read: number, next: number): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET #v = :next, #t = :type',
      ConditionExpression: unchangedCounter('#v', ':read', read),
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: { ':next': next, ':read': read, ':type': ENTITY.sequence },
    },
  };
}

/**
 * The product sequence numbers products (ids 1, 2, ... per store: the page-number list reads a
 * page by id) and variants ("offers"). Ids are taken two ways (docs/catalog-writes.md,
 * "Ids under contention"):
 * - uncontended: an insert reads the sequence (inside the write's BatchGetItem) and moves both
 *   counters in its own transaction, guarded on the values read: no extra call, no gap;
 * - after that guard lost a race: a block of ids reserved by one unconditional UpdateItem (no
 *   guard, so racing writers never make each other retry), which also opens a reservation on the
 *   item. The holder closes it (`closeReservations`), adding the ids it did not use to `gaps`; a
 *   reservation still open past its expiry (its holder died, or could not tell whether an insert
 *   landed) is settled by the next reader of the count, from the product items that exist.
 */
export interface ProductSequence {
  /** The last product id handed out: new ones are last + 1, last + 2, ... */
  last: number;
  /** Offer ids handed out so far: the new ones are offers + 1, offers + 2, ... */
  offers: number;
  /** Ids handed out that hold no product, ascending. */
  gaps: number[];
  /** Blocks of ids reserved and not yet closed by their holder (or settled by a reader). */
  open: Reservation[];
}

/**
 * A block of product ids `firstId`..`firstId + count - 1` reserved by one request. While open it
 * is one attribute of the sequence item, named `open:{count}:{expiresAtEpochMs}:{nonce}` and
 * holding the last id before the block: the reserving UpdateItem copies that from the counter it
 * moves, since the block's first id is known only once the counter has moved.
 */
export interface Reservation {
  attribute: string;
  firstId: number;
  count: number;
  expiresAt: number;
}

const OPEN_PREFIX = 'open:';

/**
 * How long a reservation may be used (an insert with its ids started), and how long after that
 * it stays open before a reader may settle it. Nothing writes with reserved ids past the first:
 * an API request ends within 29 s (its Lambda is stopped at 30 s), and work without a budget
 * (the bench's seed) reserves a fresh block instead. The second leaves an insert sent just before
 * (and its settle resend, 1.5 s later) a full minute to land; a store call is answered or
 * abandoned in seconds.
 */
export const RESERVATION_USABLE_MS = 60_000;
export const RESERVATION_SETTLE_AFTER_MS = 60_000;

/** Until when inserts may start with a reservation's ids. */
export const usableUntil = (reservation: Reservation): number => reservation.expiresAt - RESERVATION_SETTLE_AFTER_MS;

/** The reservation an attribute of the sequence item holds, or undefined if it holds none. */
export function parseReservation(attribute: string, value: unknown): Reservation | undefined {
  if (!attribute.startsWith(OPEN_PREFIX)) return undefined;
  const [count, expiresAt, nonce, ...rest] = attribute.slice(OPEN_PREFIX.length).split(':');
  const before = Number(value);
  const parsed = { count: Number(count), expiresAt: Number(expiresAt) };
  const wellFormed =
    rest.length === 0 &&
    nonce !== undefined &&
    nonce !== '' &&
    Number.isSafeInteger(parsed.count) &&
    parsed.count > 0 &&
    Number.isSafeInteger(parsed.expiresAt) &&
    Number.isSafeInteger(before) &&
    before >= 0;
  return wellFormed ? { attribute, firstId: before + 1, ...parsed } : undefined;
}

export const reservationAttribute = (count: number, expiresAt: number, nonce: string): string =>
  `${OPEN_PREFIX}${count}:${expiresAt}:${nonce}`;

/** The ids a reservation holds, ascending. */
export const reservedIds = (r: Reservation): number[] => Array.from({ length: r.count }, (_, i) => r.firstId + i);

const productSequenceKey = (storeId: string) => keys.sequence(storeId, 'product');

export function sequenceOf(item: Item | undefined): ProductSequence {
  const gaps = item?.gaps instanceof Set ? [...(item.gaps as Set<number>)].map(Number).sort((a, b) => a - b) : [];
  const open = Object.entries(item ?? {}).flatMap(([name, value]) => parseReservation(name, value) ?? []);
  return { last: sequenceValue(item), offers: Number(item?.offer_seq ?? 0), gaps, open };
}

/** Products the store holds (or is inserting right now): ids handed out less the known gaps. */
export const productCount = (sequence: ProductSequence): number => sequence.last - sequence.gaps.length;

export async function readProductSequence(ctx: RequestContext, storeId: string): Promise<ProductSequence> {
  return sequenceOf(await readSequenceItem(ctx, productSequenceKey(storeId)));
}

/** The transaction item that moves both counters from `read` by the products and offers added, only if no one else moved them. */
export function productSequenceMove(
  storeId: string,
  read: ProductSequence,
  products: number,
  offers: number,
): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: productSequenceKey(storeId),
      UpdateExpression: 'SET #v = :nextLast, offer_seq = :nextOffers, #t = :type',
      ConditionExpression: `${unchangedCounter('#v', ':last', read.last)} AND ${unchangedCounter('offer_seq', ':offers', read.offers)}`,
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: {
        ':nextLast': read.last + products,
        ':nextOffers': read.offers + offers,
        ':last': read.last,
        ':offers': read.offers,
        ':type': ENTITY.sequence,
      },
    },
  };
}

/** Ids reserved for this request alone: products `firstId`.., offers `firstOffer`.., and the reservation that holds the products'. */
export interface ReservedIds {
  firstId: number;
  firstOffer: number;
  reservation: Reservation;
}

/**
 * Reserves `products` product ids and `offers` offer ids with one unconditional UpdateItem: no
 * read, no guard, so any number of writers reserve at once without retrying. The same write
 * opens the reservation (see `Reservation`), which the caller closes with `closeReservations`.
 * Every operand of an update expression is the item before it, so the reservation's attribute
 * gets the product counter as it was: the last id before the block.
 */
export async function reserveProductIds(
  ctx: RequestContext,
  storeId: string,
  products: number,
  offers: number,
  now: number = Date.now(),
): Promise<ReservedIds> {
  const attribute = reservationAttribute(
    products,
    now + RESERVATION_USABLE_MS + RESERVATION_SETTLE_AFTER_MS,
    randomUUID().slice(0, 8),
  );
  const out = await send(
    ctx,
    new UpdateCommand({
      TableName: tableName(),
      Key: productSequenceKey(storeId),
      UpdateExpression:
        'SET #v = if_not_exists(#v, :zero) + :products, offer_seq = if_not_exists(offer_seq, :zero) + :offers, ' +
        '#t = :type, #open = if_not_exists(#v, :zero)',
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type', '#open': attribute },
      ExpressionAttributeValues: { ':products': products, ':offers': offers, ':zero': 0, ':type': ENTITY.sequence },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  const reservation = parseReservation(attribute, out.Attributes?.[attribute]);
  if (!reservation) throw new Error(`store ${storeId}: reservation ${attribute} not stored`);
  return {
    firstId: reservation.firstId,
    firstOffer: Number(out.Attributes?.offer_seq) - offers + 1,
    reservation,
  };
}

/**
 * One UpdateItem: adds `gaps` (reserved ids that hold no product) to the sequence item's number
 * set and removes the `closed` reservations. Sets and REMOVE make it idempotent: a holder and a
 * reader, or two readers, closing the same reservation write the same thing.
 */
export async function closeReservations(
  ctx: RequestContext,
  storeId: string,
  closed: readonly Reservation[],
  gaps: readonly number[],
): Promise<void> {
  if (closed.length === 0 && gaps.length === 0) return;
  const names = Object.fromEntries(closed.map((r, i) => [`#r${i}`, r.attribute]));
  const clauses = [
    ...(gaps.length > 0 ? ['ADD gaps :ids'] : []),
    ...(closed.length > 0 ? [`REMOVE ${Object.keys(names).join(', ')}`] : []),
  ];
  await send(
    ctx,
    new UpdateCommand({
      TableName: tableName(),
      Key: productSequenceKey(storeId),
      UpdateExpression: clauses.join(' '),
      ...(closed.length > 0 ? { ExpressionAttributeNames: names } : {}),
      ...(gaps.length > 0 ? { ExpressionAttributeValues: { ':ids': new Set(gaps) } } : {}),
    }),
  );
}

/**
 * The ids of the products at 1-based positions `first`..`first + count - 1` of the id-ordered
 * list, skipping `gaps` (ascending): without gaps, simply `first`..`first + count - 1`.
 */
export function idsAtPositions(first: number, count: number, gaps: readonly number[]): number[] {
  const ids: number[] = [];
  let id = first;
  let g = 0;
  // Every gap at or below the id a position lands on moves that position (and all after it) one id on.
  while (g < gaps.length && (gaps[g] as number) <= id) {
    g++;
    id++;
  }
  while (ids.length < count) {
    if (g < gaps.length && gaps[g] === id) g++;
    else ids.push(id);
    id++;
  }
  return ids;
}
