import type { RequestContext } from '#shared/context.ts';
import { tableName } from '../core/client.ts';
import { TABLE } from '../core/table.ts';
import { keys } from '../keys.ts';
import { type TransactItem, namedTransaction } from '../core/helpers.ts';
import { orderRefItem, toOrder } from './repo.ts';
import { eventPut } from '../event/item.ts';
import type { Order } from '#domain/order/order.ts';
import type { OrderEvent } from '#domain/order/events.ts';

export type OrderCommit =
  | { kind: 'committed' }
  /** The order changed since `previous` was read; `current` is what it is now (if known). */
  | { kind: 'stale'; current: Order | undefined }
  /** One of the caller's own writes (`withWrites`) failed its condition, or (`busy`) another transaction held it. */
  | { kind: 'guard_failed'; busy: boolean }
  /** Another transaction held the order; nothing was written, try again. */
  | { kind: 'conflict' };

/**
 * A change of an order's status (and paid total), its outbox event, the reference item's copy
 * of the order and the caller's own writes (the idempotency record) in one TransactWriteItems,
 * guarded on the `updated_at` the change was decided from: every order write moves it, so of any
 * number of racing writers only one commits per state, and the others decide again from the
 * order the guard hands back.
 */
export async function commitOrderChange(
  ctx: RequestContext,
  previous: Order,
  next: Order,
  event: OrderEvent,
  withWrites: TransactItem[] = [],
): Promise<OrderCommit> {
  const tx = namedTransaction([
    [
      'order',
      {
        Update: {
          TableName: tableName(),
          Key: keys.order(next.store_id, next.id),
          UpdateExpression: 'SET #status = :to, paid_total = :paid, updated_at = :now, #gsk = :gsk',
          ConditionExpression: 'updated_at = :previous',
          ExpressionAttributeNames: { '#status': 'status', '#gsk': TABLE.gsi1.sortKey },
          ExpressionAttributeValues: {
            ':previous': previous.updated_at,
            ':to': next.status,
            ':paid': next.paid_total,
            ':now': next.updated_at,
            ':gsk': keys.orderUpdateIndex(next.store_id, next.updated_at, next.id).gsi1sk,
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ],
    ['reference', { Put: { TableName: tableName(), Item: orderRefItem(next) } }],
    ['event', eventPut(event)],
    ['own', withWrites],
  ]);
  const cancelled = await tx.send(ctx);
  if (!cancelled) return { kind: 'committed' };
  const own = cancelled.guard('own');
  if (own) return { kind: 'guard_failed', ...own };
  if (cancelled.failed('order')) {
    const old = cancelled.item('order');
    return { kind: 'stale', current: old ? toOrder(old) : undefined };
  }
  return { kind: 'conflict' };
}
