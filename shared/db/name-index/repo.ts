import type { RequestContext } from '#shared/context.ts';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { batchGet, batchWrite, isConditionalCheckFailed, itemKey, type WriteRequest } from '../core/helpers.ts';
import { nameGrams } from '#domain/product/name-grams.ts';

/**
 * The name indexer's side of filter[name] (name-index/search.repo.ts reads it): pending names become
 * trigram postings. For each product with a pending entry: a posting per trigram of the new name
 * (each holding the name, so a search checks matches without reading products), the postings of
 * trigrams the rename dropped deleted, the indexed name recorded, and only then the pending entry
 * removed, if it still holds the name just indexed (a newer rename keeps it for its own turn).
 *
 * Runs off the table stream, one shard at a time in order (the mapping's parallelization factor
 * is 1), so one product is never indexed by two runs at once. Running it again is harmless: every
 * write is a put or delete of the same value.
 *
 * Cost of a new name of n code points: n postings of ~60 bytes (1 WCU each) and the record; a
 * rename of a name of n to one of m: m puts and up to n deletes. Never in the product's write.
 */

export type PendingName = { storeId: string; productId: number };

/** BatchWriteItem calls in flight while a batch's postings are written (a bulk import brings thousands). */
const POSTING_WRITERS = 16;

/** Indexes the pending names of these products (those still pending); returns how many it indexed. */
export async function indexPendingNames(ctx: RequestContext, products: readonly PendingName[]): Promise<number> {
  const unique = [...new Map(products.map((p) => [`${p.storeId}#${p.productId}`, p])).values()];
  const found = await batchGet(
    ctx,
    unique.flatMap((p) => [keys.namePending(p.storeId, p.productId), keys.nameIndexed(p.storeId, p.productId)]),
  );
  const work = unique.flatMap((p) => {
    const pending = found.get(itemKey(keys.namePending(p.storeId, p.productId)));
    if (!pending) return [];
    const indexed = found.get(itemKey(keys.nameIndexed(p.storeId, p.productId)));
    return [{ ...p, name: String(pending.n), previous: indexed ? String(indexed.n) : undefined }];
  });
  // In three steps, each after the last: a run cut short leaves the entry pending, and the record
  // says a name is indexed only once all its postings are.
  await batchWrite(
    ctx,
    work.flatMap((w) => postingWrites(w.storeId, w.productId, w.name, w.previous)),
    POSTING_WRITERS,
  );
  await batchWrite(
    ctx,
    work.map((w) => ({
      PutRequest: { Item: { ...keys.nameIndexed(w.storeId, w.productId), type: ENTITY.nameIndexed, n: w.name } },
    })),
  );
  await Promise.all(work.map((w) => removePending(ctx, w.storeId, w.productId, w.name)));
  return work.length;
}

function postingWrites(storeId: string, productId: number, name: string, previous: string | undefined): WriteRequest[] {
  if (name === previous) return [];
  const grams = nameGrams(name);
  const kept = new Set(grams);
  const dropped = previous === undefined ? [] : nameGrams(previous).filter((g) => !kept.has(g));
  return [
    ...grams.map((g) => ({ PutRequest: { Item: { ...keys.nameGram(storeId, g, productId), n: name } } })),
    ...dropped.map((g) => ({ DeleteRequest: { Key: keys.nameGram(storeId, g, productId) } })),
  ];
}

async function removePending(ctx: RequestContext, storeId: string, productId: number, name: string): Promise<void> {
  try {
    await send(
      ctx,
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.namePending(storeId, productId),
        ConditionExpression: 'n = :name',
        ExpressionAttributeValues: { ':name': name },
      }),
    );
  } catch (err) {
    if (!isConditionalCheckFailed(err)) throw err;
  }
}

/** How many of the store's names the indexer has still to take in (one page: up to 1 MB of them). */
export async function pendingNameCount(ctx: RequestContext, storeId: string): Promise<number> {
  const out = await send(
    ctx,
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.namePendingPartition(storeId) },
      Select: 'COUNT',
      ConsistentRead: true,
    }),
  );
  return out.Count ?? 0;
}
