import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { keys } from './keys.ts';
import { batchGet, itemKey } from './helpers.ts';
import { readLink } from './product-item.ts';
import { productSequenceKey, sequenceOf, type ProductSequence } from './product-sequence.ts';
import type { Product } from '#domain/product/product.ts';
import { getProduct } from './product.repo.ts';

/**
 * What a catalog write refers to by the caller's external ids: the key's external-id link (with
 * the product's copy), the key's categories and tags, and for a PUT the product sequence an
 * insert moves (PUT/PATCH /catalog/products/{external_id}).
 */

/** The product id an external id of this key maps to. */
export async function productIdForExternalId(keyId: number, externalId: string): Promise<number | undefined> {
  const out = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.externalId(keyId, 'product', externalId),
      ConsistentRead: true,
    }),
  );
  return readLink(out.Item).productId;
}

/**
 * What a key's external id addresses: the link's copy of the product in one GetItem, strongly
 * consistent so that a client reads back what it just wrote. A link written before copies existed
 * names only the id: the product item is read as well.
 */
export async function productByExternalId(
  storeId: string,
  keyId: number,
  externalId: string,
): Promise<Product | undefined> {
  const out = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.externalId(keyId, 'product', externalId),
      ConsistentRead: true,
    }),
  );
  const link = readLink(out.Item);
  if (link.product || link.productId === undefined) return link.product;
  return getProduct(storeId, link.productId, true);
}

export interface WriteTargets {
  /** The product this key's external id addresses, if any. */
  productId: number | undefined;
  /** Its state as the link's copy holds it (undefined for a link written before copies existed). */
  product: Product | undefined;
  /** The store's product sequence, when asked for (a PUT may insert) and it fitted in the read. */
  sequence: ProductSequence | undefined;
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
 * external-id link with the product's copy, the key's categories and tags it references, and
 * with `sequenceOf` the product sequence of that store.
 */
export async function resolveWriteTargets(
  keyId: number,
  externalId: string,
  categoryExternalIds: string[] = [],
  tagExternalIds: string[] = [],
  options: { sequenceOf?: string } = {},
): Promise<WriteTargets> {
  const [targets] = await resolveManyWriteTargets(
    keyId,
    [{ externalId, categoryExternalIds, tagExternalIds }],
    options,
  );
  return targets as WriteTargets;
}

/** The targets of many writes of one key (a batch), in one BatchGetItem per 100 distinct keys. */
export async function resolveManyWriteTargets(
  keyId: number,
  requests: readonly TargetRequest[],
  options: { sequenceOf?: string } = {},
): Promise<WriteTargets[]> {
  const plan = requests.map((r) => ({
    xid: keys.externalId(keyId, 'product', r.externalId),
    categories: (r.categoryExternalIds ?? []).map((x) => keys.category(keyId, x)),
    tags: (r.tagExternalIds ?? []).map((x) => keys.tag(keyId, x)),
  }));
  const wanted = plan.flatMap((p) => [p.xid, ...p.categories, ...p.tags]);
  // The sequence rides along only where it costs no call of its own (100 keys a BatchGetItem);
  // otherwise an insert reads it when it needs it (a batch of 100 replaces never does).
  const fits = new Set(wanted.map(itemKey)).size % 100 !== 0;
  const seqKey = options.sequenceOf === undefined || !fits ? undefined : productSequenceKey(options.sequenceOf);
  const found = await batchGet([...(seqKey ? [seqKey] : []), ...wanted]);
  const sequence = seqKey ? sequenceOf(found.get(itemKey(seqKey))) : undefined;
  return plan.map(({ xid, categories, tags }) => {
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
    return { ...readLink(found.get(itemKey(xid))), sequence, categoryIds, missing };
  });
}
