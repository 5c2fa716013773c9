import { TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client.ts';
import { ENTITY } from './table.ts';
import { keys } from './keys.ts';
import { cancellationReasons, type Item } from './helpers.ts';
import type { Order } from '../domain/order/order.ts';
import { AppError } from '../http/app-error.ts';

export function toOrder(item: Item): Order {
  return {
    id: item.id,
    store_id: item.store_id,
    reference: item.reference,
    status: item.status,
    currency_code: item.currency_code,
    customer: { name: item.customer.name, email: item.customer.email, phone: item.customer.phone ?? null },
    items: item.items,
    subtotal: item.subtotal,
    shipping_total: item.shipping_total,
    discount_total: item.discount_total,
    total: item.total,
    paid_total: item.paid_total,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

export function orderItem(o: Order): Item {
  return { ...keys.order(o.store_id, o.id), ...keys.orderUpdateIndex(o.store_id, o.updated_at, o.id), type: ENTITY.order, ...o };
}

async function nextOrderId(storeId: string): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.sequence(storeId, 'order'),
      UpdateExpression: 'ADD #v :one SET #t = :type',
      ExpressionAttributeNames: { '#v': 'value', '#t': 'type' },
      ExpressionAttributeValues: { ':one': 1, ':type': ENTITY.sequence },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.value);
}

/** The storefront's side: a new order and its reference map, together; a reference is unique per store. */
export async function insertOrder(draft: Omit<Order, 'id'>): Promise<Order> {
  const order: Order = { ...draft, id: await nextOrderId(draft.store_id) };
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: tableName(), Item: orderItem(order), ConditionExpression: 'attribute_not_exists(pk)' } },
          {
            Put: {
              TableName: tableName(),
              Item: { ...keys.orderRef(order.store_id, order.reference), type: ENTITY.orderRef, order_id: order.id },
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  } catch (err) {
    if (cancellationReasons(err)?.[1]?.Code === 'ConditionalCheckFailed') {
      throw new AppError(409, 'conflict', `an order with reference "${order.reference}" already exists`, 'reference');
    }
    throw err;
  }
  return order;
}
