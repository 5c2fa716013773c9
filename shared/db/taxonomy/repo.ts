import type { RequestContext } from '#shared/context.ts';
import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY } from '../core/table.ts';
import { keys } from '../keys.ts';
import { nextInSequence } from '../core/sequence.ts';
import { batchGet, cancellationReasons, itemKey, type Item, type TransactItem } from '../core/helpers.ts';
import { eventPut } from '../event/item.ts';
import type { StoreEvent } from '#domain/event/event.ts';
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

/** A category or a tag as its key sees it: the text is `name` for a category, `value` for a tag. */
export type TaxonomyRecord = Category | Tag;

/** The record this key's external id names, read strongly (an upsert decides from it). */
export async function getTaxonomy(
  ctx: RequestContext,
  kind: TaxonomyKind,
  keyId: number,
  externalId: string,
): Promise<TaxonomyRecord | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keyOf(kind, keyId, externalId), ConsistentRead: true }),
  );
  return out.Item ? (toRecord(kind, out.Item) as unknown as TaxonomyRecord) : undefined;
}

/** The id of a new category or tag of the store: one atomic ADD. */
export const nextTaxonomyId = (ctx: RequestContext, kind: TaxonomyKind, storeId: string): Promise<number> =>
  nextInSequence(ctx, keys.sequence(storeId, kind));

/** `stale`: another write created or renamed it first, and nothing was written. */
export type TaxonomyCommit = { kind: 'committed' } | { kind: 'stale' };

/**
 * Writes `record` with the event the use case raised, in one transaction: a new one guarded on
 * its key being free, a rename guarded on the `updated_at` it was decided from (`previous`), and
 * only its text and `updated_at` SET so that attributes this module does not know survive.
 */
export async function commitTaxonomy(
  ctx: RequestContext,
  kind: TaxonomyKind,
  owner: { storeId: string; keyId: number },
  record: TaxonomyRecord,
  previous: string | undefined,
  event: StoreEvent,
): Promise<TaxonomyCommit> {
  const Key = keyOf(kind, owner.keyId, record.external_id);
  const text = (record as unknown as Record<string, unknown>)[field[kind]];
  const write: TransactItem =
    previous === undefined
      ? {
          Put: {
            TableName: tableName(),
            Item: { ...Key, type: ENTITY[kind], store_id: owner.storeId, key_id: owner.keyId, ...record },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        }
      : {
          Update: {
            TableName: tableName(),
            Key,
            UpdateExpression: 'SET #text = :text, updated_at = :updated',
            ConditionExpression: 'updated_at = :previous',
            ExpressionAttributeNames: { '#text': field[kind] },
            ExpressionAttributeValues: { ':text': text, ':updated': record.updated_at, ':previous': previous },
          },
        };
  try {
    await send(ctx, new TransactWriteCommand({ TransactItems: [write, eventPut(event)] }));
    return { kind: 'committed' };
  } catch (err) {
    if (!cancellationReasons(err)) throw err;
    return { kind: 'stale' };
  }
}

/** The category or tag this key's external id names, as an upsert answers it (a dry run's "before"). */
export async function readTaxonomy(
  ctx: RequestContext,
  kind: TaxonomyKind,
  keyId: number,
  externalId: string,
): Promise<Record<string, unknown> | undefined> {
  const item = (await batchGet(ctx, [keyOf(kind, keyId, externalId)])).values().next().value;
  return item ? toRecord(kind, item) : undefined;
}

/** Resolves external ids of this key, in order; `missing` is the index of the first unknown one. */
export async function resolveTaxonomy(
  ctx: RequestContext,
  kind: TaxonomyKind,
  keyId: number,
  externalIds: string[],
): Promise<{ ids: number[]; missing: number | undefined }> {
  const found = await batchGet(
    ctx,
    externalIds.map((x) => keyOf(kind, keyId, x)),
  );
  const ids: number[] = [];
  for (const [i, x] of externalIds.entries()) {
    const item = found.get(itemKey(keyOf(kind, keyId, x)));
    if (!item) return { ids, missing: i };
    ids.push(Number(item.id));
  }
  return { ids, missing: undefined };
}
