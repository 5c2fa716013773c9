import { nextUpdatedAt } from '../domain/clock.ts';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { nextInSequence } from './sequence.ts';
import { batchGet, isConditionalCheckFailed, itemFromError, itemKey, type Item } from './helpers.ts';

/** Categories and tags: named by the calling key's external ids, numbered per store. */
export type TaxonomyKind = 'category' | 'tag';

export interface Category {
  id: number;
  external_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface Tag {
  id: number;
  external_id: string;
  value: string;
  created_at: string;
  updated_at: string;
}

const field = { category: 'name', tag: 'value' } as const;
const keyOf = (kind: TaxonomyKind, keyId: number, externalId: string) =>
  kind === 'category' ? keys.category(keyId, externalId) : keys.tag(keyId, externalId);

function toRecord(kind: TaxonomyKind, item: Item) {
  return { id: item.id, external_id: item.external_id, [field[kind]]: item[field[kind]], created_at: item.created_at, updated_at: item.updated_at };
}

/**
 * Create or rename. A rename is one conditional UpdateItem; a create takes an id from the store's
 * sequence and a conditional Put (a racing create of the same external id falls back to rename).
 * `updated_at` moves only when the text changes.
 */
async function upsert(kind: TaxonomyKind, storeId: string, keyId: number, externalId: string, text: string, now: string): Promise<Item> {
  const Key = keyOf(kind, keyId, externalId);
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const out = await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key,
          UpdateExpression: 'SET #f = :text, updated_at = :now',
          // updated_at never moves back, even when this Lambda's clock is behind the last writer's.
          ConditionExpression: 'attribute_exists(pk) AND #f <> :text AND updated_at < :now',
          ExpressionAttributeNames: { '#f': field[kind] },
          ExpressionAttributeValues: { ':text': text, ':now': now },
          ReturnValues: 'ALL_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return out.Attributes as Item;
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
      const existing = itemFromError(err.Item);
      if (existing && existing[field[kind]] === text) return existing; // same text: nothing to change
      if (existing) {
        now = nextUpdatedAt(existing.updated_at as string, Date.parse(now));
        continue;
      }
    }
    const id = await nextInSequence(keys.sequence(storeId, kind));
    const item = {
      ...Key,
      type: ENTITY[kind],
      id,
      store_id: storeId,
      key_id: keyId,
      external_id: externalId,
      [field[kind]]: text,
      created_at: now,
      updated_at: now,
    };
    try {
      await db().send(new PutCommand({ TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
      return item;
    } catch (err) {
      if (!isConditionalCheckFailed(err)) throw err;
    }
  }
  throw new Error(`could not upsert ${kind} ${externalId}`);
}

export async function upsertCategory(storeId: string, keyId: number, externalId: string, name: string, now: string): Promise<Category> {
  return toRecord('category', await upsert('category', storeId, keyId, externalId, name, now)) as unknown as Category;
}

export async function upsertTag(storeId: string, keyId: number, externalId: string, value: string, now: string): Promise<Tag> {
  return toRecord('tag', await upsert('tag', storeId, keyId, externalId, value, now)) as unknown as Tag;
}

/** Resolves external ids of this key, in order; `missing` is the index of the first unknown one. */
export async function resolveTaxonomy(
  kind: TaxonomyKind,
  keyId: number,
  externalIds: string[],
): Promise<{ ids: number[]; missing: number | undefined }> {
  const found = await batchGet(externalIds.map((x) => keyOf(kind, keyId, x)));
  const ids: number[] = [];
  for (const [i, x] of externalIds.entries()) {
    const item = found.get(itemKey(keyOf(kind, keyId, x)));
    if (!item) return { ids, missing: i };
    ids.push(Number(item.id));
  }
  return { ids, missing: undefined };
}
