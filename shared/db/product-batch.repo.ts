import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { cancellationReasons, type TransactItem } from './helpers.ts';
import { newLinkWrite, productItem } from './product-item.ts';
import { groupIndexWrites } from './product-index.repo.ts';
import { productSequenceMove, readProductSequence, type ProductSequence } from './product-sequence.ts';
import type { Offer, Product } from '../domain/product/product.ts';
import { backoff } from '../domain/retry.ts';

export type NewProduct = Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] };

/** Products per insert transaction: at most 100 actions (the sequence, then per product: itself, its map, SKU link, pending name). */
export const INSERT_GROUP_SIZE = 24;

/** `sequence`: the sequence as this insert left it, so the next group needs no read of its own. */
export type GroupInsert = { kind: 'inserted'; products: Product[]; sequence: ProductSequence } | { kind: 'external_id_taken' };

/**
 * Inserts new products (each with its external id) with consecutive dense ids in ONE
 * transaction: the sequence moves by their count (guarded on `sequence`, the state read; read
 * here when the caller has none or a racing insert moved it), and every product comes with its
 * external-id link and copy (guarded, as in the single insert), its SKU links and its pending
 * name (for the name index). All or nothing. `external_id_taken`: a map entry already existed (a racing
 * write got there first); nothing was written, and the caller writes these products one by one.
 */
export async function insertProductGroup(storeId: string, drafts: readonly NewProduct[], sequence?: ProductSequence): Promise<GroupInsert> {
  const offerCount = drafts.reduce((n, d) => n + d.offers.length, 0);
  let read = sequence;
  for (let attempt = 1; attempt <= 50; attempt++) {
    read ??= await readProductSequence(storeId);
    let nextOffer = read.offers + 1;
    const products: Product[] = drafts.map((d, i) => ({ ...d, id: read!.count + 1 + i, offers: d.offers.map((o) => ({ ...o, id: nextOffer++ })) }));
    const links = products.flatMap((p) => newLinkWrite(p) ?? []);
    const items: TransactItem[] = [
      productSequenceMove(storeId, read, products.length, offerCount),
      ...links,
      ...products.map((p) => ({ Put: { TableName: tableName(), Item: productItem(p), ConditionExpression: 'attribute_not_exists(pk)' } })),
      ...groupIndexWrites(products),
    ];
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return { kind: 'inserted', products, sequence: { count: read.count + products.length, offers: read.offers + offerCount } };
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      if (reasons.slice(1, 1 + links.length).some((r) => r.Code === 'ConditionalCheckFailed')) return { kind: 'external_id_taken' };
      // The sequence moved (a concurrent insert) or the transaction conflicted: read it again, take the next ids.
      read = undefined;
      await backoff(attempt);
    }
  }
  throw new Error(`store ${storeId}: could not allocate ${drafts.length} product ids under contention`);
}
