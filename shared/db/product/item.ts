import type { RequestContext } from '#shared/context.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { normalizeName, type Offer, type Product } from '#domain/product/product.ts';
import { productChecksum } from '#domain/product/checksum.ts';
import { tableName, send } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { type Item, type TransactItem, batchGet, itemKey } from '../core/helpers.ts';
import { keys } from '../keys.ts';
import { sequenceOf, type ProductSequence } from '../core/sequence.ts';

/**
 * The product's items and the reads every product write starts with.
 *
 * How a product is stored: its own item (STORE#{s} / PRODUCT#{id}, what reads and the list use)
 * and, for a product written through the API, a copy inside its external-id link item
 * (KEY#{k} / XID#product#{external_id}, attribute `product`). Every product write puts the copy
 * in the same transaction as the product, so the one BatchGetItem a write starts with already
 * holds the state it changes. Links written before the copy existed carry only `record_id`;
 * the next write of their product adds it. The link also carries the product's `checksum`
 * (docs/catalog-writes.md#checksums) for the checksum list's projection. The same transaction
 * keeps the product's index items in step (`indexWrites`): a SKU link per variant SKU and, when
 * its name is new, a pending-name entry (what the list's filters read: ./index.repo.ts).
 */

export function toProduct(item: Item): Product {
  return {
    id: item.id,
    store_id: item.store_id,
    external_id: item.external_id ?? null,
    owner_key_id: item.owner_key_id ?? null,
    name: item.name,
    description: item.description ?? '',
    status: item.status,
    image_url: item.image_url ?? null,
    category_ids: item.category_ids ?? [],
    category_external_ids: item.category_external_ids ?? [],
    tag_external_ids: item.tag_external_ids ?? [],
    offers: (item.offers ?? []).map(
      (o: Item): Offer => ({
        id: o.id,
        sku: o.sku ?? null,
        price: o.price,
        quantity: o.quantity,
        // DynamoDB keeps no key order inside a map: name and value first, as they were written.
        properties: ((o.properties ?? []) as Item[]).map((p) => ({ name: p.name, value: p.value, ...p })),
        weight: o.weight ?? null,
        length: o.length ?? null,
        height: o.height ?? null,
        width: o.width ?? null,
      }),
    ),
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/**
 * Product reads are eventually consistent (half the units): a product changed a moment ago may
 * come back as its previous version for typically well under a second. Never a 404 or a gap for a
 * product that exists: an id the eventually consistent read does not find is read again strongly
 * (docs/api.md, "Consistency").
 */
export async function getProduct(
  ctx: RequestContext,
  storeId: string,
  id: number,
  consistent = false,
): Promise<Product | undefined> {
  const read = (strong: boolean) =>
    send(ctx, new GetCommand({ TableName: tableName(), Key: keys.product(storeId, id), ConsistentRead: strong }));
  const item = (await read(consistent)).Item ?? (consistent ? undefined : (await read(true)).Item);
  return item ? toProduct(item) : undefined;
}

export function productItem(p: Product): Item {
  return { ...keys.product(p.store_id, p.id), type: ENTITY.product, ...p };
}

/** The external-id link of an API product, carrying a copy of it; undefined for a store-admin product. */
export function linkItem(p: Product): Item | undefined {
  if (p.external_id === null || p.owner_key_id === null) return undefined;
  return {
    ...keys.externalId(p.owner_key_id, 'product', p.external_id),
    type: ENTITY.externalId,
    record_id: p.id,
    product: p,
    // What GET /catalog/products/checksums projects, so the list never reads a product's fields.
    checksum: productChecksum(p),
  };
}

/** What a link item says: the product id, and the product when the link carries its copy. */
export function readLink(item: Item | undefined): { productId: number | undefined; product: Product | undefined } {
  if (!item) return { productId: undefined, product: undefined };
  return { productId: Number(item.record_id), product: item.product ? toProduct(item.product as Item) : undefined };
}

/**
 * The link of a new product, for the transaction that inserts it: guarded, so exactly one
 * product exists per external id however many PUTs race. Its cancellation reason hands back the
 * link that won (with its product copy).
 */
export function newLinkWrite(p: Product): TransactItem | undefined {
  const Item = linkItem(p);
  if (!Item) return undefined;
  return {
    Put: {
      TableName: tableName(),
      Item,
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/** The link's copy brought up to `p`, for the transaction that changes the product (unguarded: the product item carries the guard). */
export function linkCopyWrite(p: Product): TransactItem | undefined {
  const Item = linkItem(p);
  return Item ? { Put: { TableName: tableName(), Item } } : undefined;
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

/** The product id an external id of this key maps to. */
export async function productIdForExternalId(
  ctx: RequestContext,
  keyId: number,
  externalId: string,
): Promise<number | undefined> {
  return (await getLink(ctx, keyId, externalId)).productId;
}

/**
 * What a key's external id addresses: the link's copy of the product in one GetItem, strongly
 * consistent so that a client reads back what it just wrote. A link written before copies existed
 * names only the id: the product item is read as well.
 */
export async function productByExternalId(
  ctx: RequestContext,
  storeId: string,
  keyId: number,
  externalId: string,
): Promise<Product | undefined> {
  const link = await getLink(ctx, keyId, externalId);
  if (link.product || link.productId === undefined) return link.product;
  return getProduct(ctx, storeId, link.productId, true);
}

/** A key's external-id link in one GetItem, strongly consistent (read-your-writes). */
async function getLink(ctx: RequestContext, keyId: number, externalId: string) {
  const out = await send(
    ctx,
    new GetCommand({
      TableName: tableName(),
      Key: keys.externalId(keyId, 'product', externalId),
      ConsistentRead: true,
    }),
  );
  return readLink(out.Item);
}

/**
 * What a catalog write refers to by the caller's external ids: the key's external-id link (with
 * the product's copy), the key's categories and tags, and for a PUT the product sequence an
 * insert moves (PUT/PATCH /catalog/products/{external_id}).
 */
export interface WriteTargets {
  /** The product this key's external id addresses, if any. */
  productId: number | undefined;
  /** Its state as the link's copy holds it (undefined for a link written before copies existed). */
  product: Product | undefined;
  /** The store's product sequence, when asked for (a PUT may insert), it fitted in the read and there is no product yet. */
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
  ctx: RequestContext,
  keyId: number,
  externalId: string,
  categoryExternalIds: string[] = [],
  tagExternalIds: string[] = [],
  options: { sequenceOf?: string } = {},
): Promise<WriteTargets> {
  const [targets] = await resolveManyWriteTargets(
    ctx,
    keyId,
    [{ externalId, categoryExternalIds, tagExternalIds }],
    options,
  );
  return targets as WriteTargets;
}

/** The targets of many writes of one key (a batch), in one BatchGetItem per 100 distinct keys. */
export async function resolveManyWriteTargets(
  ctx: RequestContext,
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
  const seqKey = options.sequenceOf === undefined || !fits ? undefined : keys.sequence(options.sequenceOf, 'product');
  const found = await batchGet(ctx, [...(seqKey ? [seqKey] : []), ...wanted]);
  // What an insert numbers from: a target whose external id names a product already needs none.
  let sequence: ProductSequence | undefined;
  const sequenceFor = (link: { productId: number | undefined }) =>
    seqKey === undefined || link.productId !== undefined
      ? undefined
      : (sequence ??= sequenceOf(found.get(itemKey(seqKey))));
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
    const link = readLink(found.get(itemKey(xid)));
    return { ...link, sequence: sequenceFor(link), categoryIds, missing };
  });
}
