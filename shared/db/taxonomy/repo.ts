import { nextUpdatedAt } from '#domain/time.ts';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { nextInSequence } from '../core/sequence.ts';
import { batchGet, cancellationReasons, itemKey, type Item } from '../core/helpers.ts';
import { eventPut } from '../event/item.ts';
import { buildEvent, keyOrigin } from '#domain/event/event.ts';
import type { Category, Tag, TaxonomyKind } from '#domain/product/taxonomy.ts';

const field = { category: 'name', tag: 'value' } as const;
const keyOf = (kind: TaxonomyKind, keyId: number, externalId: string) =>
  kind === 'category' ? keys.category(keyId, externalId) : keys.tag(keyId, externalId);

function toRecord(kind: TaxonomyKind, item: Item) {
  return {
    id: item.id,
    external_id: item.external_id,
    [field[kind]]: item[field[kind]],
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/**
 * Create or rename, with its `category.upserted` / `tag.upserted` event in the same transaction.
 * The item is read first (the event carries the whole record, and a transaction returns no new
 * values), then written guarded on what was read: a racing writer makes this one read again,
 * and the same text again writes nothing and raises nothing. `updated_at` moves only when the
 * text changes, and never back (nextUpdatedAt).
 */
async function upsert(
  kind: TaxonomyKind,
  storeId: string,
  keyId: number,
  externalId: string,
  text: string,
  now: string,
): Promise<Item> {
  const Key = keyOf(kind, keyId, externalId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const existing = (await db().send(new GetCommand({ TableName: tableName(), Key, ConsistentRead: true }))).Item;
    if (existing && existing[field[kind]] === text) return existing;
    const item: Item = existing
      ? { ...existing, [field[kind]]: text, updated_at: nextUpdatedAt(existing.updated_at as string, Date.parse(now)) }
      : {
          ...Key,
          type: ENTITY[kind],
          id: await nextInSequence(keys.sequence(storeId, kind)),
          store_id: storeId,
          key_id: keyId,
          external_id: externalId,
          [field[kind]]: text,
          created_at: now,
          updated_at: now,
        };
    const guard = existing
      ? {
          ConditionExpression: 'updated_at = :previous',
          ExpressionAttributeValues: { ':previous': existing.updated_at },
        }
      : { ConditionExpression: 'attribute_not_exists(pk)' };
    const { external_id: _own, ...record } = toRecord(kind, item);
    const event = buildEvent(
      `${kind}.upserted`,
      storeId,
      { [kind]: record },
      item.updated_at as string,
      keyOrigin(keyId),
    );
    try {
      await db().send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: tableName(), Item: item, ...guard } },
            eventPut({ ...event, owner_key_id: keyId, external_id: externalId }),
          ],
        }),
      );
      return item;
    } catch (err) {
      // Another write got there first: read again (a same-text winner makes this a no-op).
      if (!cancellationReasons(err)) throw err;
    }
  }
  throw new Error(`could not upsert ${kind} ${externalId}`);
}

export async function upsertCategory(
  storeId: string,
  keyId: number,
  externalId: string,
  name: string,
  now: string,
): Promise<Category> {
  return toRecord('category', await upsert('category', storeId, keyId, externalId, name, now)) as unknown as Category;
}

export async function upsertTag(
  storeId: string,
  keyId: number,
  externalId: string,
  value: string,
  now: string,
): Promise<Tag> {
  return toRecord('tag', await upsert('tag', storeId, keyId, externalId, value, now)) as unknown as Tag;
}

/** The category or tag this key's external id names, as an upsert answers it (a dry run's "before"). */
export async function readTaxonomy(
  kind: TaxonomyKind,
  keyId: number,
  externalId: string,
): Promise<Record<string, unknown> | undefined> {
  const item = (await batchGet([keyOf(kind, keyId, externalId)])).values().next().value;
  return item ? toRecord(kind, item) : undefined;
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
