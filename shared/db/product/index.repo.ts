import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { cancellationReasons, queryAll, type TransactItem } from '../core/helpers.ts';
import { normalizeName, type Product } from '#domain/product/product.ts';

/**
 * The product list's filters read these instead of the products: one SKU link per variant SKU,
 * and for filter[name] the trigram postings (name-index/search.repo.ts). The product repository writes
 * the SKU links and a pending-name entry in the same transaction as the product (indexWrites), so
 * neither drifts; the name indexer turns pending names into postings later (name-index/repo.ts),
 * and until it has, the search reads the pending entry instead.
 */

/** Ids of products with a variant whose SKU is exactly `sku`, ascending. */
export async function productIdsBySku(storeId: string, sku: string): Promise<number[]> {
  const items = await queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.skuPartition(storeId, sku) },
    ProjectionExpression: 'product_id',
    ConsistentRead: true,
  });
  return items.map((i) => Number(i.product_id)).sort((a, b) => a - b);
}

/** The pending-name entry of a product whose normalized name is new: what the search reads until the indexer has run. */
export function pendingNameWrite(product: Product): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.namePending(product.store_id, product.id),
        type: ENTITY.namePending,
        store_id: product.store_id,
        product_id: product.id,
        n: normalizeName(product.name),
      },
    },
  };
}

/**
 * Marks the names of these products pending, each only if the product is still as read (a
 * rename in between wrote its own, newer entry, which this must not overwrite). How a store
 * whose products predate the name index gets its postings: the indexer takes them in. At most
 * 50 products (two actions each); false if one changed meanwhile and nothing was written.
 */
export async function markNamesPending(products: readonly Product[]): Promise<boolean> {
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
    await db().send(new TransactWriteCommand({ TransactItems: items }));
    return true;
  } catch (err) {
    if (cancellationReasons(err)?.some((r) => r.Code === 'ConditionalCheckFailed')) return false;
    throw err;
  }
}

/** The writes that keep the name index and SKU links in step with a product (insert or change). */
export function indexWrites(next: Product, previous?: Product): TransactItem[] {
  const writes: TransactItem[] = [];
  if (!previous || normalizeName(previous.name) !== normalizeName(next.name)) writes.push(pendingNameWrite(next));
  const skus = (p?: Product) => new Set((p?.offers ?? []).map((o) => o.sku).filter((s): s is string => !!s));
  const before = skus(previous);
  const after = skus(next);
  for (const sku of after) {
    if (!before.has(sku)) {
      writes.push({
        Put: {
          TableName: tableName(),
          Item: { ...keys.skuLink(next.store_id, sku, next.id), type: ENTITY.skuLink, product_id: next.id },
        },
      });
    }
  }
  for (const sku of before) {
    if (!after.has(sku))
      writes.push({ Delete: { TableName: tableName(), Key: keys.skuLink(next.store_id, sku, next.id) } });
  }
  return writes;
}

/** The index writes of products inserted together (a batch group): each one's pending name and SKU links. */
export function groupIndexWrites(products: readonly Product[]): TransactItem[] {
  return products.flatMap((p) => indexWrites(p));
}
