import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { batchGet, cancellationReasons, itemKey } from './helpers.ts';
import { productItem, type WriteTargets } from './product.repo.ts';
import { normalizeName, type Offer, type Product } from '../domain/product/product.ts';
import { backoff } from '../domain/retry.ts';

type TransactItem = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>[number];
export type NewProduct = Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] };

export interface TargetRequest {
  externalId: string;
  categoryExternalIds?: string[] | undefined;
  tagExternalIds?: string[] | undefined;
}

/**
 * The write targets of many product writes of one key (external-id map entries and the
 * categories and tags they reference) in one BatchGetItem per 100 distinct keys.
 */
export async function resolveManyWriteTargets(keyId: number, requests: readonly TargetRequest[]): Promise<WriteTargets[]> {
  const plan = requests.map((r) => ({
    xid: keys.externalId(keyId, 'product', r.externalId),
    categories: (r.categoryExternalIds ?? []).map((x) => keys.category(keyId, x)),
    tags: (r.tagExternalIds ?? []).map((x) => keys.tag(keyId, x)),
  }));
  const found = await batchGet(plan.flatMap((p) => [p.xid, ...p.categories, ...p.tags]));
  return plan.map(({ xid, categories, tags }) => {
    const mapped = found.get(itemKey(xid));
    const categoryIds: number[] = [];
    let missing: WriteTargets['missing'];
    for (const [index, k] of categories.entries()) {
      const item = found.get(itemKey(k));
      if (!item) {
        missing = { list: 'category', index };
        break;
      }
      categoryIds.push(Number(item.id));
    }
    if (!missing) {
      const index = tags.findIndex((k) => !found.has(itemKey(k)));
      if (index >= 0) missing = { list: 'tag', index };
    }
    return { productId: mapped ? Number(mapped.record_id) : undefined, categoryIds, missing };
  });
}

/** Products per insert transaction: 100 actions at most (sequence, product, map, SKU links, name chunks). */
export const INSERT_GROUP_SIZE = 24;

export type GroupInsert = { kind: 'inserted'; products: Product[] } | { kind: 'external_id_taken' };

/**
 * Inserts new products (each with its external id) with consecutive dense ids in ONE
 * transaction: the sequence moves by their count (guarded on the value read), and every product
 * comes with its external-id map (guarded by `attribute_not_exists`), its SKU links and its
 * names in the name index (one update per index chunk). All or nothing, like the single insert.
 * `external_id_taken`: a map entry already existed (a racing write got there first), nothing
 * was written, and the caller writes these products one by one instead.
 */
export async function insertProductGroup(storeId: string, drafts: readonly NewProduct[]): Promise<GroupInsert> {
  const seqKey = keys.sequence(storeId, 'product');
  const offerCount = drafts.reduce((n, d) => n + d.offers.length, 0);
  for (let attempt = 1; attempt <= 50; attempt++) {
    const reserved = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: seqKey,
        UpdateExpression: 'ADD offer_seq :n SET #t = :type',
        ExpressionAttributeNames: { '#t': 'type' },
        ExpressionAttributeValues: { ':n': offerCount, ':type': ENTITY.sequence },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const count = Number(reserved.Attributes?.value ?? 0);
    let nextOffer = Number(reserved.Attributes?.offer_seq ?? 0) - offerCount + 1;
    const products: Product[] = drafts.map((d, i) => ({ ...d, id: count + 1 + i, offers: d.offers.map((o) => ({ ...o, id: nextOffer++ })) }));
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: seqKey,
          UpdateExpression: 'SET #v = :next',
          ConditionExpression: count === 0 ? 'attribute_not_exists(#v)' : '#v = :count',
          ExpressionAttributeNames: { '#v': 'value' },
          ExpressionAttributeValues: count === 0 ? { ':next': products.length } : { ':next': count + products.length, ':count': count },
        },
      },
      ...products.flatMap((p) => productWrites(p)),
      ...nameChunkWrites(storeId, products),
    ];
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items }));
      return { kind: 'inserted', products };
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      if (reasons.some((r, i) => r.Code === 'ConditionalCheckFailed' && isExternalIdMap(items[i]))) return { kind: 'external_id_taken' };
      // The sequence moved (a concurrent insert) or the transaction conflicted: take the next ids.
      await backoff(attempt);
    }
  }
  throw new Error(`store ${storeId}: could not allocate ${drafts.length} product ids under contention`);
}

function productWrites(p: Product): TransactItem[] {
  const skus = new Set(p.offers.map((o) => o.sku).filter((s): s is string => !!s));
  return [
    { Put: { TableName: tableName(), Item: productItem(p), ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.externalId(p.owner_key_id as number, 'product', p.external_id as string), type: ENTITY.externalId, record_id: p.id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...[...skus].map((sku) => ({ Put: { TableName: tableName(), Item: { ...keys.skuLink(p.store_id, sku, p.id), type: ENTITY.skuLink, product_id: p.id } } })),
  ];
}

/** One update per name-index chunk, setting the names of every product of the group that falls in it. */
function nameChunkWrites(storeId: string, products: readonly Product[]): TransactItem[] {
  const byChunk = new Map<number, Product[]>();
  for (const p of products) byChunk.set(keys.productNamesChunkOf(p.id), [...(byChunk.get(keys.productNamesChunkOf(p.id)) ?? []), p]);
  return [...byChunk].map(([chunk, members]) => ({
    Update: {
      TableName: tableName(),
      Key: keys.productNames(storeId, chunk),
      UpdateExpression: `SET #t = :type, ${members.map((_, i) => `#n${i} = :n${i}`).join(', ')}`,
      ExpressionAttributeNames: { '#t': 'type', ...Object.fromEntries(members.map((p, i) => [`#n${i}`, keys.productNameAttribute(p.id)])) },
      ExpressionAttributeValues: { ':type': ENTITY.productNames, ...Object.fromEntries(members.map((p, i) => [`:n${i}`, normalizeName(p.name)])) },
    },
  }));
}

const isExternalIdMap = (item: TransactItem | undefined) => item?.Put?.Item?.type === ENTITY.externalId;
