import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { cancellationReasons, type TransactItem } from './helpers.ts';
import { productItem } from './product.repo.ts';
import { externalIdMapWrite } from './product-refs.repo.ts';
import { groupIndexWrites } from './product-index.repo.ts';
import { productCountMove, reserveProductIds } from './product-sequence.ts';
import type { Offer, Product } from '../domain/product/product.ts';
import { backoff } from '../domain/retry.ts';

export type NewProduct = Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] };

/** Products per insert transaction: at most 100 actions (sequence, products, maps, SKU links, name chunks). */
export const INSERT_GROUP_SIZE = 24;

export type GroupInsert = { kind: 'inserted'; products: Product[] } | { kind: 'external_id_taken' };

/**
 * Inserts new products (each with its external id) with consecutive dense ids in ONE
 * transaction: the sequence moves by their count (guarded on the value read), and every product
 * comes with its external-id map (guarded, as in the single insert), its SKU links and its names
 * in the name index. All or nothing. `external_id_taken`: a map entry already existed (a racing
 * write got there first); nothing was written, and the caller writes these products one by one.
 */
export async function insertProductGroup(storeId: string, drafts: readonly NewProduct[]): Promise<GroupInsert> {
  const offerCount = drafts.reduce((n, d) => n + d.offers.length, 0);
  for (let attempt = 1; attempt <= 50; attempt++) {
    const { count, firstOffer } = await reserveProductIds(storeId, offerCount);
    let nextOffer = firstOffer;
    const products: Product[] = drafts.map((d, i) => ({ ...d, id: count + 1 + i, offers: d.offers.map((o) => ({ ...o, id: nextOffer++ })) }));
    const maps = products.map((p) => externalIdMapWrite(p.owner_key_id as number, p.external_id as string, p.id));
    const items: TransactItem[] = [
      productCountMove(storeId, count, products.length),
      ...maps,
      ...products.map((p) => ({ Put: { TableName: tableName(), Item: productItem(p), ConditionExpression: 'attribute_not_exists(pk)' } })),
      ...groupIndexWrites(storeId, products),
    ];
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return { kind: 'inserted', products };
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      if (reasons.slice(1, 1 + maps.length).some((r) => r.Code === 'ConditionalCheckFailed')) return { kind: 'external_id_taken' };
      // The sequence moved (a concurrent insert) or the transaction conflicted: take the next ids.
      await backoff(attempt);
    }
  }
  throw new Error(`store ${storeId}: could not allocate ${drafts.length} product ids under contention`);
}
