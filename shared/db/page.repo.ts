import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import type { Page } from '../domain/page/page.ts';
import type { Item } from './helpers.ts';

/** The page's own `type` (page | blog) is stored as `page_type`: `type` is the table's entity tag. */
export function pageItem(p: Page): Item {
  const { type, ...rest } = p;
  return { ...keys.page(p.store_id, p.id), ...rest, type: ENTITY.page, page_type: type };
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
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

export async function nextPageId(storeId: string): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.sequence(storeId, 'page'),
      UpdateExpression: 'ADD #v :one SET #t = :type',
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': ENTITY.sequence },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.value);
}

/** A new page with its external-id map and its slug claim, all or nothing. */
export async function insertPage(draft: Omit<Page, 'id'>): Promise<Page> {
  const page: Page = { ...draft, id: await nextPageId(draft.store_id) };
  await db().send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: tableName(), Item: pageItem(page), ConditionExpression: 'attribute_not_exists(pk)' } },
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.externalId(page.owner_key_id, 'page', page.external_id), type: ENTITY.externalId, record_id: page.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: tableName(),
            Item: { ...keys.slug(page.store_id, page.slug), type: ENTITY.slug, page_id: page.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    }),
  );
  return page;
}
