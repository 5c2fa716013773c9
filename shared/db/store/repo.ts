import type { RequestContext } from '#shared/context.ts';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { send, tableName } from '../core/client.ts';
import { ENTITY, TABLE } from '../core/table.ts';
import { keys } from '../keys.ts';
import { isConditionalCheckFailed, queryAll, type Item } from '../core/helpers.ts';

export interface Store {
  id: string;
  name: string;
  currency_code: string;
  created_at: string;
}

/** What creating a store did: `created`, or `exists` when a store has its id already (nothing written). */
export type StoreCreation = { kind: 'created'; store: Store } | { kind: 'exists' };

export async function createStore(ctx: RequestContext, store: Store): Promise<StoreCreation> {
  try {
    await send(
      ctx,
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.store(store.id), ...keys.storeIndexEntry(store.id), type: ENTITY.store, ...store },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (err) {
    if (isConditionalCheckFailed(err)) return { kind: 'exists' };
    throw err;
  }
  return { kind: 'created', store };
}

const storeOf = (i: Item): Store => ({
  id: i.id,
  name: i.name,
  currency_code: i.currency_code,
  created_at: i.created_at,
});

export async function getStore(ctx: RequestContext, storeId: string): Promise<Store | undefined> {
  const out = await send(
    ctx,
    new GetCommand({ TableName: tableName(), Key: keys.store(storeId), ConsistentRead: true }),
  );
  return out.Item ? storeOf(out.Item) : undefined;
}

/** Every store, by id (the admin console's first page): one index partition, written with the store. */
export async function listStores(ctx: RequestContext): Promise<Store[]> {
  const items = await queryAll(ctx, {
    TableName: tableName(),
    IndexName: TABLE.gsi1.indexName,
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.storesIndex().gsi1pk },
  });
  return items.map(storeOf);
}
