import type { RequestContext } from '#shared/context.ts';
import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { keys, type Key } from '../keys.ts';
import { getWithAlongside, type Item, namedTransaction } from '../core/helpers.ts';
import type { Page, PageContent, PageType } from '#domain/page/page.ts';
import { readSequence, sequenceMove, sequenceValue } from '../core/sequence.ts';

/**
 * Pages (docs/contract.md#pages). Three kinds of item, always written together:
 *
 *   page           STORE#{s} / PAGE#{id:012}           the record; gsi1 = STORE#{s}#PAGES#{type} / PAGE#{id:012}
 *   external id    KEY#{k}   / XID#page#{external_id}  → record_id, and a copy of the page  (one page per external id of a key)
 *   slug claim     STORE#{s} / SLUG#{slug}             → page_id    (one page per slug in a store)
 *
 * A published page with an unpublished revision (`draft`, a map on the page item) holds the
 * claims of both its live slug and its revision's slug, so that publishing the revision can never
 * meet a taken slug; the claims a change no longer needs are released in its transaction.
 *
 * Every write is conditional: a new page's three items are Put `attribute_not_exists`, a change is
 * guarded on the `updated_at` it was decided from (which strictly increases), a slug moves by
 * claiming the new one (`attribute_not_exists`) and releasing the old (`page_id = me`) in the
 * same transaction as the page. Racing writers therefore cannot create two pages for one external
 * id, give one slug to two pages, or lose an update.
 *
 * The external-id item carries the whole page (without the index keys), so a write addressed by
 * external id reads one item; the page item stays canonical (lists, the type index). Every page
 * write puts the copy in its transaction and is guarded on the page item's `updated_at`, which
 * every write moves, so a copy that ever fell behind fails that guard and the next round decides
 * from the page item itself. An external-id item written before the copy existed holds only
 * `record_id` and costs one more read (the next write adds the copy).
 */

/** The page's own `type` (page | blog) is stored as `page_type`: `type` is the table's entity tag. */
export function pageItem(p: Page): Item {
  const { type, ...rest } = p;
  return {
    ...keys.page(p.store_id, p.id),
    ...keys.pageTypeIndex(p.store_id, type, p.id),
    ...rest,
    type: ENTITY.page,
    page_type: type,
  };
}

export function toPage(item: Item): Page {
  return {
    id: item.id,
    store_id: item.store_id,
    external_id: item.external_id,
    owner_key_id: item.owner_key_id,
    type: item.page_type,
    title: item.title,
    slug: item.slug,
    body: item.body,
    status: item.status,
    published_at: item.published_at ?? null,
    draft: item.draft ? toContent(item.draft) : null,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

// A map keeps no key order, so the revision is read field by field.
const toContent = (d: Item): PageContent => ({ type: d.type, title: d.title, slug: d.slug, body: d.body });

/** Page ids are dense and ascend: a create moves the store's page sequence in its own transaction. */
const pageSequenceKey = (storeId: string) => keys.sequence(storeId, 'page');

/** The external-id item: the map to the page's id and a copy of the page. */
export function pageLinkItem(p: Page): Item {
  const { gsi1pk: _pk, gsi1sk: _sk, ...copy } = pageItem(p);
  return {
    ...copy,
    ...keys.externalId(p.owner_key_id, 'page', p.external_id),
    type: ENTITY.externalId,
    record_id: p.id,
  };
}

/** An external-id item written before it carried the page holds only `record_id`. */
const carriesPage = (item: Item) => item.updated_at !== undefined;

export const slugClaim = (page: Pick<Page, 'store_id' | 'slug' | 'id'>): Item => ({
  ...keys.slug(page.store_id, page.slug),
  type: ENTITY.slug,
  page_id: page.id,
});

export type CreateResult =
  | { kind: 'created'; page: Page }
  /** The key's external id already names a page (a racing first save won): that page as its copy says. */
  | { kind: 'external_id_taken'; page: Page | undefined; pageId: number | undefined }
  | { kind: 'slug_taken' }
  /** A concurrent create moved the page sequence first, or the transaction conflicted: nothing was written. */
  | { kind: 'sequence_moved' };

/**
 * A new page with its external-id map and its slug claim, all or nothing, with the next page id:
 * the transaction also moves the page sequence from `sequence` (the value read, e.g. beside the
 * external-id item by `readPageToSave`, or by `readPageSequence`), guarded on it. One attempt: a
 * concurrent create moves the sequence first and makes the guard fail (`sequence_moved`); the use
 * case then reads it again and takes the next id.
 */
export async function createPage(
  ctx: RequestContext,
  draft: Omit<Page, 'id'>,
  sequence: number,
): Promise<CreateResult> {
  const page: Page = { ...draft, id: sequence + 1 };
  const tx = namedTransaction([
    [
      'page',
      { Put: { TableName: tableName(), Item: pageItem(page), ConditionExpression: 'attribute_not_exists(pk)' } },
    ],
    [
      'link',
      {
        Put: {
          TableName: tableName(),
          Item: pageLinkItem(page),
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ],
    [
      'slug',
      { Put: { TableName: tableName(), Item: slugClaim(page), ConditionExpression: 'attribute_not_exists(pk)' } },
    ],
    ['sequence', sequenceMove(pageSequenceKey(page.store_id), sequence, page.id)],
  ]);
  const cancelled = await tx.send(ctx);
  if (!cancelled) return { kind: 'created', page };
  // The external id first: a racing save of the same page with the same slug is an update, not a 409.
  if (cancelled.failed('link')) {
    const link = cancelled.item('link');
    return {
      kind: 'external_id_taken',
      page: link && carriesPage(link) ? toPage(link) : undefined,
      pageId: link?.record_id as number | undefined,
    };
  }
  if (cancelled.failed('slug')) return { kind: 'slug_taken' };
  if (cancelled.failed('page') && !cancelled.failed('sequence')) {
    throw new Error(`page id ${page.id} of store ${page.store_id} is taken but the page sequence says ${sequence}`);
  }
  return { kind: 'sequence_moved' };
}

/** The store's page sequence as it stands (strongly consistent): the value a create moves from. */
export const readPageSequence = (ctx: RequestContext, storeId: string): Promise<number> =>
  readSequence(ctx, pageSequenceKey(storeId));

// ---- reads -------------------------------------------------------------------------------

export async function getPage(ctx: RequestContext, storeId: string, id: number): Promise<Page | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.page(storeId, id), ConsistentRead: true }),
  );
  return out.Item ? toPage(out.Item) : undefined;
}

export interface PageByExternalId {
  page: Page | undefined;
  /** The item read alongside (the request's idempotency record), if one was asked for. */
  alongside: Item | undefined;
}

/**
 * The page a key's external id names, from the external-id item's copy: one consistent read,
 * which also reads `alongside` in the same BatchGetItem.
 */
export async function readPageByExternalId(
  ctx: RequestContext,
  principal: { keyId: number; storeId: string },
  externalId: string,
  alongside?: Key,
): Promise<PageByExternalId> {
  const { item: link, alongside: other } = await getWithAlongside(
    ctx,
    keys.externalId(principal.keyId, 'page', externalId),
    alongside,
  );
  if (!link) return { page: undefined, alongside: other };
  return {
    page: carriesPage(link) ? toPage(link) : await getPage(ctx, principal.storeId, Number(link.record_id)),
    alongside: other,
  };
}

/**
 * A save's read, one BatchGetItem: the page the key's external id names and, for when there is
 * none yet, the page sequence that `createPage` takes the new page's id from.
 */
export async function readPageToSave(
  ctx: RequestContext,
  principal: { keyId: number; storeId: string },
  externalId: string,
): Promise<{ page: Page | undefined; sequence: number }> {
  const read = await readPageByExternalId(ctx, principal, externalId, pageSequenceKey(principal.storeId));
  return { page: read.page, sequence: sequenceValue(read.alongside) };
}

/** Ids are 12-digit padded in the sort key. */
export const MAX_PAGE_ID = 999_999_999_999;

export interface PageList {
  pages: Page[];
  /** True when at least one more page matches after the last one returned. */
  more: boolean;
}

/**
 * Pages with id > cursor, ascending, `limit + 1` read to know whether another page follows.
 * Without a type: the store partition from the cursor's sort key, strongly consistent. With a
 * type: that type's gsi1 partition, which holds only pages of that type in id order, so the
 * Query reads exactly what it returns (a FilterExpression on the store partition would read
 * every page of the other type in between, bodies included). A Query stops at 1 MB, so large
 * bodies may take more than one round trip per list page.
 */
export async function listPagesAfter(
  ctx: RequestContext,
  storeId: string,
  cursor: number,
  limit: number,
  type?: PageType,
): Promise<PageList> {
  if (cursor >= MAX_PAGE_ID) return { pages: [], more: false };
  const from = keys.page(storeId, cursor + 1).sk;
  const to = keys.page(storeId, MAX_PAGE_ID).sk;
  const query = type
    ? {
        IndexName: TABLE.gsi1.indexName,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': TABLE.gsi1.partitionKey, '#sk': TABLE.gsi1.sortKey },
        ExpressionAttributeValues: { ':pk': keys.pageTypeIndex(storeId, type, 0).gsi1pk, ':from': from, ':to': to },
      }
    : {
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': TABLE.partitionKey, '#sk': TABLE.sortKey },
        ExpressionAttributeValues: { ':pk': keys.page(storeId, 0).pk, ':from': from, ':to': to },
        ConsistentRead: true,
      };
  const found: Page[] = [];
  let start: Item | undefined;
  do {
    const out = await send(
      ctx,
      new QueryCommand({ TableName: tableName(), ...query, ExclusiveStartKey: start, Limit: limit + 1 - found.length }),
    );
    for (const item of out.Items ?? []) found.push(toPage(item));
    start = out.LastEvaluatedKey;
  } while (start && found.length <= limit);
  return { pages: found.slice(0, limit), more: found.length > limit };
}
