import { backoff } from '../domain/retry.ts';
import { randomUUID } from 'node:crypto';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY, TABLE } from './table.ts';
import { keys } from './keys.ts';
import { cancellationReasons, isConditionalCheckFailed, itemFromError, type Item, type TransactItem } from './helpers.ts';
import type { Page, PageContent, PageType } from '../domain/page/page.ts';
import { nextInSequence } from './sequence.ts';

/**
 * Pages (CONTRACT §9). Three kinds of item, always written together:
 *
 *   page           STORE#{s} / PAGE#{id:012}           the record; gsi1 = STORE#{s}#PAGES#{type} / PAGE#{id:012}
 *   external id    KEY#{k}   / XID#page#{external_id}  → record_id  (one page per external id of a key)
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
 */

/** The page's own `type` (page | blog) is stored as `page_type`: `type` is the table's entity tag. */
export function pageItem(p: Page): Item {
  const { type, ...rest } = p;
  return { ...keys.page(p.store_id, p.id), ...keys.pageTypeIndex(p.store_id, type, p.id), ...rest, type: ENTITY.page, page_type: type };
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

/** Ids ascend and are never reused; a create that loses its race leaves a gap (lists are cursor-based). */
export const nextPageId = (storeId: string) => nextInSequence(keys.sequence(storeId, 'page'));

const slugClaim = (page: Pick<Page, 'store_id' | 'slug' | 'id'>): Item => ({ ...keys.slug(page.store_id, page.slug), type: ENTITY.slug, page_id: page.id });

export type CreateResult =
  | { kind: 'created'; page: Page }
  /** The key's external id already names a page (a racing first save won). */
  | { kind: 'external_id_taken'; pageId: number | undefined }
  | { kind: 'slug_taken' };

/** A new page with its external-id map and its slug claim, all or nothing. */
export async function createPage(draft: Omit<Page, 'id'>): Promise<CreateResult> {
  const page: Page = { ...draft, id: await nextPageId(draft.store_id) };
  const items: TransactItem[] = [
    { Put: { TableName: tableName(), Item: pageItem(page), ConditionExpression: 'attribute_not_exists(pk)' } },
    {
      Put: {
        TableName: tableName(),
        Item: { ...keys.externalId(page.owner_key_id, 'page', page.external_id), type: ENTITY.externalId, record_id: page.id },
        ConditionExpression: 'attribute_not_exists(pk)',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    },
    { Put: { TableName: tableName(), Item: slugClaim(page), ConditionExpression: 'attribute_not_exists(pk)' } },
  ];
  for (let attempt = 1; ; attempt++) {
    try {
      // The token turns an SDK retry of a commit whose answer was lost into a success, not a conflict.
      await db().send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: randomUUID() }));
      return { kind: 'created', page };
    } catch (err) {
      const reasons = cancellationReasons(err);
      if (!reasons) throw err;
      // The external id first: a racing save of the same page with the same slug is an update, not a 409.
      const xid = reasons[1];
      if (xid?.Code === 'ConditionalCheckFailed') {
        return { kind: 'external_id_taken', pageId: itemFromError(xid.Item)?.record_id as number | undefined };
      }
      if (reasons[2]?.Code === 'ConditionalCheckFailed') return { kind: 'slug_taken' };
      if (reasons[0]?.Code === 'ConditionalCheckFailed') throw new Error(`page id ${page.id} of store ${page.store_id} is already taken`);
      if (attempt >= 5) throw err;
      await backoff(attempt);
    }
  }
}

/** For the seed and tests: a page in any state, or an error if its external id or slug is taken. */
export async function insertPage(draft: Omit<Page, 'id'>): Promise<Page> {
  const result = await createPage(draft);
  if (result.kind !== 'created') throw new Error(`page ${draft.external_id} not inserted: ${result.kind}`);
  return result.page;
}

// ---- reads -------------------------------------------------------------------------------

export async function getPage(storeId: string, id: number): Promise<Page | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.page(storeId, id), ConsistentRead: true }));
  return out.Item ? toPage(out.Item) : undefined;
}

export async function pageIdForExternalId(keyId: number, externalId: string): Promise<number | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.externalId(keyId, 'page', externalId), ConsistentRead: true }),
  );
  return out.Item ? Number(out.Item.record_id) : undefined;
}

/** Two consistent reads: the key's external-id map names the id, the id names the page. */
export async function getPageByExternalId(principal: { keyId: number; storeId: string }, externalId: string): Promise<Page | undefined> {
  const id = await pageIdForExternalId(principal.keyId, externalId);
  return id === undefined ? undefined : getPage(principal.storeId, id);
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
export async function listPagesAfter(storeId: string, cursor: number, limit: number, type?: PageType): Promise<PageList> {
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
    const out = await db().send(
      new QueryCommand({ TableName: tableName(), ...query, ExclusiveStartKey: start, Limit: limit + 1 - found.length }),
    );
    for (const item of out.Items ?? []) found.push(toPage(item));
    start = out.LastEvaluatedKey;
  } while (start && found.length <= limit);
  return { pages: found.slice(0, limit), more: found.length > limit };
}

// ---- changes -----------------------------------------------------------------------------

export type ChangeResult =
  | { kind: 'committed' }
  /** The page changed since `previous` was read; `current` is what it is now (if known). */
  | { kind: 'stale'; current: Page | undefined }
  /** Another page of the store holds the new slug. */
  | { kind: 'slug_taken' }
  /** One of the caller's guarded writes (`withWrites`) failed its condition. */
  | { kind: 'guard_failed' }
  /** Another transaction held one of the items; nothing was written, try again. */
  | { kind: 'conflict' };

const FIELDS = ['page_type', 'title', 'slug', 'body', 'status', 'published_at', 'draft', 'updated_at', TABLE.gsi1.partitionKey] as const;

/** The slugs a page holds claims on: its live one and its revision's. */
const slugsHeld = (p: Page) => new Set([p.slug, ...(p.draft ? [p.draft.slug] : [])]);

/**
 * Writes `next` over `previous`, guarded on `previous.updated_at`. Only the attributes that
 * differ are SET. A change that moves no slug and carries no other write is one conditional
 * UpdateItem (half the units of a transaction); otherwise one TransactWriteItems holds the page,
 * the slug claim move and the caller's writes (the idempotency record of a publish).
 */
export async function commitPageChange(previous: Page, next: Page, withWrites: TransactItem[] = []): Promise<ChangeResult> {
  const before = pageItem(previous);
  const after = pageItem(next);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':previous': previous.updated_at };
  const sets: string[] = [];
  for (const [i, field] of FIELDS.entries()) {
    if (JSON.stringify(before[field]) === JSON.stringify(after[field]) && field !== 'updated_at') continue;
    names[`#f${i}`] = field;
    values[`:f${i}`] = after[field] ?? null;
    sets.push(`#f${i} = :f${i}`);
  }
  names['#updated'] = 'updated_at';
  const pageUpdate = {
    TableName: tableName(),
    Key: keys.page(next.store_id, next.id),
    UpdateExpression: `SET ${sets.join(', ')}`,
    ConditionExpression: '#updated = :previous',
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
  const held = slugsHeld(previous);
  const holds = slugsHeld(next);
  const claims: TransactItem[] = [...holds]
    .filter((slug) => !held.has(slug))
    .map((slug) => ({
      Put: {
        TableName: tableName(),
        Item: slugClaim({ ...next, slug }),
        ConditionExpression: 'attribute_not_exists(pk) OR page_id = :id',
        ExpressionAttributeValues: { ':id': next.id },
      },
    }));
  const releases: TransactItem[] = [...held]
    .filter((slug) => !holds.has(slug))
    .map((slug) => ({
      Delete: {
        TableName: tableName(),
        Key: keys.slug(previous.store_id, slug),
        ConditionExpression: 'page_id = :id',
        ExpressionAttributeValues: { ':id': previous.id },
      },
    }));
  const slugMoves = [...claims, ...releases];

  if (slugMoves.length === 0 && withWrites.length === 0) {
    try {
      await db().send(new UpdateCommand(pageUpdate));
      return { kind: 'committed' };
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      const old = itemFromError(err.Item);
      return { kind: 'stale', current: old ? toPage(old) : undefined };
    }
  }

  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [{ Update: pageUpdate }, ...slugMoves, ...withWrites],
        ClientRequestToken: randomUUID(),
      }),
    );
    return { kind: 'committed' };
  } catch (err) {
    const reasons = cancellationReasons(err);
    if (!reasons) throw err;
    const failed = (r: { Code?: string } | undefined) => r?.Code === 'ConditionalCheckFailed';
    if (reasons.slice(1 + slugMoves.length).some(failed)) return { kind: 'guard_failed' };
    if (failed(reasons[0])) {
      const old = itemFromError(reasons[0]?.Item);
      return { kind: 'stale', current: old ? toPage(old) : undefined };
    }
    // The page was as read, so a new claim is held by another page.
    if (reasons.slice(1, 1 + claims.length).some(failed)) return { kind: 'slug_taken' };
    return { kind: 'conflict' };
  }
}

