import type { RequestContext } from '#shared/context.ts';
import type { Product } from '#domain/product/product.ts';
import type { StoreEvent } from '#domain/event/event.ts';
import { tableName } from '../core/client.ts';
import { batchGet, itemKey, namedTransaction, type Item, type TransactItem } from '../core/helpers.ts';
import { keys, type Key } from '../keys.ts';
import { eventPut } from '../event/item.ts';
import { getProduct, linkCopyWrite, readLink, toProduct } from './item.ts';

/**
 * A stock delta's read: the key's external-id link (with the product's copy) and the request's
 * idempotency record (`alongside`) in one strongly consistent BatchGetItem. A link from before
 * the copy existed costs one read of the product item more.
 */
export async function readStockTarget(
  ctx: RequestContext,
  storeId: string,
  keyId: number,
  externalId: string,
  alongside: Key,
): Promise<{ product: Product | undefined; alongside: Item | undefined }> {
  const link = keys.externalId(keyId, 'product', externalId);
  const found = await batchGet(ctx, [link, alongside]);
  const { productId, product } = readLink(found.get(itemKey(link)));
  const record = found.get(itemKey(alongside));
  if (productId === undefined) return { product: undefined, alongside: record };
  return { product: product ?? (await getProduct(ctx, storeId, productId, true)), alongside: record };
}

export type StockCommit =
  | { kind: 'committed' }
  /** Another write changed the product since it was read (`current`: the product now, when the store handed it back); nothing was written. */
  | { kind: 'stale'; current: Product | undefined }
  /** The caller's own write (the idempotency record) failed its condition, or (`busy`) another transaction held it. */
  | { kind: 'guard_failed'; busy: boolean };

/**
 * One variant's quantity moved (`next` differs from `current` in that quantity and `updated_at`
 * only), in one TransactWriteItems: the product item's variant at `index`, guarded on the
 * `updated_at` that was read (every product write moves it, so no racing write is lost: the loser
 * decides again from the new quantity) and on the index still holding the variant's id; the
 * link's copy; the `product.stock_changed` event; and the caller's own writes (the idempotency
 * record). Name and SKUs do not change, so the name index and SKU links need no write.
 */
export async function commitStockChange(
  ctx: RequestContext,
  current: Product,
  next: Product,
  index: number,
  event: StoreEvent,
  withWrites: TransactItem[],
): Promise<StockCommit> {
  const offer = next.offers[index];
  if (!Number.isInteger(index) || !offer) throw new Error(`product ${next.id} has no variant at ${index}`);
  const tx = namedTransaction([
    [
      'product',
      {
        Update: {
          TableName: tableName(),
          Key: keys.product(next.store_id, next.id),
          UpdateExpression: `SET offers[${index}].quantity = :quantity, updated_at = :updated_at`,
          ConditionExpression: `updated_at = :previous AND offers[${index}].id = :offer`,
          ExpressionAttributeValues: {
            ':quantity': offer.quantity,
            ':updated_at': next.updated_at,
            ':previous': current.updated_at,
            ':offer': offer.id,
          },
          // The loser of a race decides again from this at once, without a read or a wait.
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ],
    ['copy', linkCopyWrite(next)],
    ['event', eventPut(event)],
    ['own', withWrites],
  ]);
  const cancelled = await tx.send(ctx);
  if (!cancelled) return { kind: 'committed' };
  const own = cancelled.guard('own');
  if (own) return { kind: 'guard_failed', ...own };
  const now = cancelled.item('product');
  return { kind: 'stale', current: now ? toProduct(now) : undefined };
}
