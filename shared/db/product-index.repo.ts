import { tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { queryAll, type TransactItem } from './helpers.ts';
import { normalizeName, type Product } from '../domain/product/product.ts';

/**
 * The product list's filters read these instead of the products: name chunks (1000 normalized
 * names an item, attribute `n<id>`) and one SKU link per variant SKU. The product repository
 * writes them in the same transaction as the product (indexWrites), so they never drift.
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

/**
 * Ids of products whose name contains `needle` (case-insensitive), ascending. Reads the compact
 * name index (1000 names an item), not the products: ~1 read unit per 4 KB of names.
 */
export async function productIdsByName(storeId: string, needle: string): Promise<number[]> {
  const wanted = normalizeName(needle);
  const chunks = await queryAll({
    TableName: tableName(),
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': `STORE#${storeId}`, ':prefix': keys.productNamesPrefix },
    ConsistentRead: true,
  });
  const ids: number[] = [];
  for (const chunk of chunks) {
    for (const [attr, value] of Object.entries(chunk)) {
      if (/^n\d+$/.test(attr) && typeof value === 'string' && value.includes(wanted)) ids.push(Number(attr.slice(1)));
    }
  }
  return ids.sort((a, b) => a - b);
}

/** The writes that keep the name index and SKU links in step with a product (insert or change). */
export function indexWrites(next: Product, previous?: Product): TransactItem[] {
  const writes: TransactItem[] = [];
  if (!previous || normalizeName(previous.name) !== normalizeName(next.name)) {
    writes.push({
      Update: {
        TableName: tableName(),
        Key: keys.productNames(next.store_id, keys.productNamesChunkOf(next.id)),
        UpdateExpression: 'SET #n = :name, #t = :type',
        ExpressionAttributeNames: { '#n': keys.productNameAttribute(next.id), '#t': 'type' },
        ExpressionAttributeValues: { ':name': normalizeName(next.name), ':type': ENTITY.productNames },
      },
    });
  }
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
    if (!after.has(sku)) writes.push({ Delete: { TableName: tableName(), Key: keys.skuLink(next.store_id, sku, next.id) } });
  }
  return writes;
}

/**
 * The index writes of products inserted together (a batch group): one update per name-index
 * chunk, setting every name of the group that falls in it (a transaction may touch an item only
 * once), and each product's SKU links.
 */
export function groupIndexWrites(storeId: string, products: readonly Product[]): TransactItem[] {
  const byChunk = new Map<number, Product[]>();
  for (const p of products) byChunk.set(keys.productNamesChunkOf(p.id), [...(byChunk.get(keys.productNamesChunkOf(p.id)) ?? []), p]);
  const names: TransactItem[] = [...byChunk].map(([chunk, members]) => ({
    Update: {
      TableName: tableName(),
      Key: keys.productNames(storeId, chunk),
      UpdateExpression: `SET #t = :type, ${members.map((_, i) => `#n${i} = :n${i}`).join(', ')}`,
      ExpressionAttributeNames: { '#t': 'type', ...Object.fromEntries(members.map((p, i) => [`#n${i}`, keys.productNameAttribute(p.id)])) },
      ExpressionAttributeValues: { ':type': ENTITY.productNames, ...Object.fromEntries(members.map((p, i) => [`:n${i}`, normalizeName(p.name)])) },
    },
  }));
  const skuLinks = products.flatMap((p) => indexWrites(p).filter((w) => w.Put !== undefined));
  return [...names, ...skuLinks];
}
