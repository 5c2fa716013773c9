import type { RequestContext } from '#shared/context.ts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { namedTransaction } from '../core/helpers.ts';
import { groupIndexWrites, newLinkWrite, productItem, readLink } from './item.ts';
import { eventPut } from '../event/item.ts';
import { productSequenceMove, type ProductSequence } from '../core/sequence.ts';
import type { Product } from '#domain/product/product.ts';
import type { StoreEvent } from '#domain/event/event.ts';
import { DomainError } from '#domain/errors.ts';

/**
 * The insert transaction of new products, numbered and with their events by the use case
 * (shared/app/product-writes.ts for a single PUT, shared/app/product-ids.ts for a batch): one
 * TransactWriteItems holds each product, its external-id link and copy (guarded: one product
 * per external id, however many writes race), its SKU links and pending name, its event, and
 * on the uncontended path the sequence move guarded on the state the use case read. One attempt:
 * the use case decides what follows a lost or unanswered one (shared/app/contention.ts).
 */

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
 * guarded sequence moved or the transaction conflicted, and nothing was written; `unanswered`: a
 * store error, or no answer before the budget ended, left open whether it landed (sent again with
 * the same token, it answers success if it did).
 */
export type InsertAttempt =
  | { kind: 'inserted'; products: Product[] }
  | { kind: 'external_id_taken'; winner: Winner }
  | { kind: 'lost' }
  | { kind: 'unanswered' };

/**
 * One transaction that inserts `products` with the ids they carry and their `events`; with
 * `guard`, also moves the sequence from that state (the uncontended path). `token` is the
 * request token: the same items sent again with it answer success if the first send landed.
 */
export async function insertProducts(
  ctx: RequestContext,
  storeId: string,
  products: readonly Product[],
  events: readonly StoreEvent[],
  guard: ProductSequence | undefined,
  token: string,
): Promise<InsertAttempt> {
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
    await send(ctx, new TransactWriteCommand({ TransactItems: tx.items, ClientRequestToken: token }));
    return { kind: 'inserted', products: [...products] };
  } catch (err) {
    // A store error (DynamoDB Local's lock timeout among them) leaves the outcome open.
    if (err instanceof Error && err.name === 'InternalServerError') return { kind: 'unanswered' };
    // Abandoned when the budget ended, or the store did not answer: it may still land.
    if (err instanceof DomainError && err.code === 'service_unavailable') return { kind: 'unanswered' };
    const cancelled = tx.cancelledBy(err);
    if (!cancelled) throw err;
    if (cancelled.failed('links')) return { kind: 'external_id_taken', winner: readLink(cancelled.item('links')) };
    if (cancelled.failed('products') && !guard)
      throw new Error(`store ${storeId}: a reserved product id already holds a product`);
    return { kind: 'lost' };
  }
}
