import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { batchGet, itemKey, type TransactItem } from './helpers.ts';

/**
 * What a catalog write refers to by the caller's external ids: the key's external-id → product
 * map and the key's categories and tags (PUT/PATCH /catalog/products/{external_id}).
 */

/** The product id an external id of this key maps to. */
export async function productIdForExternalId(keyId: number, externalId: string): Promise<number | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.externalId(keyId, 'product', externalId), ConsistentRead: true }),
  );
  return out.Item ? Number(out.Item.record_id) : undefined;
}

/**
 * The external-id map entry of a new product, for the transaction that inserts it: guarded, so
 * exactly one product exists per external id however many PUTs race. Its cancellation reason
 * hands back the product that won.
 */
export function externalIdMapWrite(ownerKeyId: number, externalId: string, productId: number): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: { ...keys.externalId(ownerKeyId, 'product', externalId), type: ENTITY.externalId, record_id: productId },
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

export interface WriteTargets {
  /** The product this key's external id addresses, if any. */
  productId: number | undefined;
  /** Ids of the named categories, in order (only when all exist). */
  categoryIds: number[];
  /** The first reference that does not exist for this key, e.g. `{ list: 'tag', index: 2 }`. */
  missing: { list: 'category' | 'tag'; index: number } | undefined;
}

export interface TargetRequest {
  externalId: string;
  categoryExternalIds?: string[] | undefined;
  tagExternalIds?: string[] | undefined;
}

/**
 * Everything a product write must know before it changes anything, in one BatchGetItem: the
 * external-id map entry and the key's categories and tags it references.
 */
export async function resolveWriteTargets(keyId: number, externalId: string, categoryExternalIds: string[] = [], tagExternalIds: string[] = []): Promise<WriteTargets> {
  const [targets] = await resolveManyWriteTargets(keyId, [{ externalId, categoryExternalIds, tagExternalIds }]);
  return targets as WriteTargets;
}

/** The targets of many writes of one key (a batch), in one BatchGetItem per 100 distinct keys. */
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
