import type { RequestContext } from '#shared/context.ts';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { keys } from '../keys.ts';
import { cancellationReasons, queryAll, type TransactItem } from '../core/helpers.ts';
import type { Product } from '#domain/product/product.ts';
import { pendingNameWrite } from './item.ts';

/**
 * The product list's filters read these instead of the products: one SKU link per variant SKU,
 * and for filter[name] the trigram postings (name-index/search.repo.ts). Every product write puts
 * the SKU links and a pending-name entry in the same transaction as the product (their items:
 * `indexWrites`, ./item.ts), so neither drifts; the name indexer turns pending names into postings
 * later (name-index/repo.ts), and until it has, the search reads the pending entry instead.
 */

/** Ids of products with a variant whose SKU is exactly `sku`, ascending. */
export async function productIdsBySku(ctx: RequestContext, storeId: string, sku: string): Promise<number[]> {
  const items = await queryAll(ctx, {
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.skuPartition(storeId, sku) },
    ProjectionExpression: 'product_id',
    ConsistentRead: true,
  });
  return items.map((i) => Number(i.product_id)).sort((a, b) => a - b);
}

/**
 * Marks the names of these products pending, each only if the product is still as read (a
 * rename in between wrote its own, newer entry, which this must not overwrite). How a store
 * whose products predate the name index gets its postings: the indexer takes them in. At most
 * 50 products (two actions each); false if one changed meanwhile and nothing was written.
 */
export async function markNamesPending(ctx: RequestContext, products: readonly Product[]): Promise<boolean> {
  const items: TransactItem[] = products.flatMap((p) => [
    {
      ConditionCheck: {
        TableName: tableName(),
        Key: keys.product(p.store_id, p.id),
        ConditionExpression: 'updated_at = :read',
        ExpressionAttributeValues: { ':read': p.updated_at },
      },
    },
    pendingNameWrite(p),
  ]);
  try {
    await send(ctx, new TransactWriteCommand({ TransactItems: items }));
    return true;
  } catch (err) {
    if (cancellationReasons(err)?.some((r) => r.Code === 'ConditionalCheckFailed')) return false;
    throw err;
  }
}
