import * as v from 'valibot';
import { parse } from '../../../shared/domain/validation.ts';
import { DomainError, notFound } from '../../../shared/domain/errors.ts';
import type { RouteFn } from '../../../shared/http/http-handler.ts';
import type { RouteResult } from '../../../shared/http/response.ts';
import { idempotent, IdempotencyLockLost } from '../../../shared/http/idempotency.ts';
import { commitStatusChange, getOrderByReference } from '../../../shared/db/order.repo.ts';
import { ORDER_STATUSES, toOrderResource, type Order } from '../../../shared/domain/order/order.ts';
import { decideStatusChange, referenceFromPath, withStatus } from '../../../shared/domain/order/rules.ts';
import { buildStatusChangedEvent } from '../../../shared/domain/order/events.ts';

const SETTABLE = ORDER_STATUSES.filter((s) => s !== 'paid');

const Body = v.strictObject({
  status: v.pipe(
    v.string('must be a string'),
    v.check((s) => s !== 'paid', 'status_not_allowed: paid is set by the payment side only and cannot be set through this API'),
    v.picklist(SETTABLE, `must be one of ${SETTABLE.join(', ')}`),
  ),
});

/** Racing writers on one order are retried from the status the losing commit saw. */
const MAX_ATTEMPTS = 5;

/**
 * POST /orders/{reference}/status under an Idempotency-Key: validation → the order by reference
 * → the state machine → one transaction {order, outbox event, stored response}.
 */
export const setOrderStatus: RouteFn = (input) =>
  idempotent(input, {
    precheck: () => {
      const { status } = parse(Body, input.body ?? {});
      const reference = referenceFromPath(input.pathParameters.reference);
      // A reference outside the alphabet can name no order.
      if (reference === undefined) throw notFound('order');
      return { reference, status };
    },
    run: async (session, { reference, status }) => {
      const storeId = input.principal.storeId;
      let order = await getOrderByReference(storeId, reference);
      for (let attempt = 1; ; attempt++) {
        if (!order) throw notFound('order');
        const decision = decideStatusChange(order.status, status);
        if (decision.kind === 'noop') return { body: { data: toOrderResource(order) } } satisfies RouteResult;
        if (decision.kind === 'forbidden') {
          throw new DomainError('invalid_transition', `An order cannot move from ${decision.from} to ${decision.to}.`, 'status');
        }
        const now = changeTime(order);
        const next = withStatus(order, status, now);
        const prepared = session.prepare({ body: { data: toOrderResource(next) } });
        const commit = await commitStatusChange(order, next, buildStatusChangedEvent(next, order.status, now), [prepared.write]);
        if (commit.kind === 'committed') {
          session.committed(prepared);
          return { body: { data: toOrderResource(next) } };
        }
        if (commit.kind === 'guard_failed') throw new IdempotencyLockLost();
        if (attempt >= MAX_ATTEMPTS) throw new Error(`order ${order.id}: status change still contended after ${attempt} attempts`);
        if (commit.kind === 'stale' && commit.current) {
          order = commit.current;
        } else {
          await new Promise((r) => setTimeout(r, 10 + Math.random() * 40 * attempt));
          order = await getOrderByReference(storeId, reference);
        }
      }
    },
  });

/**
 * updated_at never goes back, even if this Lambda's clock is behind the last writer's: the
 * "updated since" index and every client's sync cursor depend on it.
 */
function changeTime(order: Order): string {
  return new Date(Math.max(Date.now(), Date.parse(order.updated_at) + 1)).toISOString();
}
