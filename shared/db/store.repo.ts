import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { isConditionalCheckFailed } from './helpers.ts';
import { DomainError } from '../domain/errors.ts';

export interface Store {
  id: string;
  name: string;
  currency_code: string;
  created_at: string;
}

export async function createStore(store: Store): Promise<Store> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.store(store.id), type: ENTITY.store, ...store },
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  } catch (err) {
    if (isConditionalCheckFailed(err)) throw new DomainError('conflict', `store "${store.id}" already exists`, 'id');
    throw err;
  }
  return store;
}

export async function getStore(storeId: string): Promise<Store | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.store(storeId), ConsistentRead: true }));
  if (!out.Item) return undefined;
  return { id: out.Item.id, name: out.Item.name, currency_code: out.Item.currency_code, created_at: out.Item.created_at };
}
