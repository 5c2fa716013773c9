import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { contextOfCall } from '#db/core/client.ts';
import { onAwsClient } from '#shared/aws-clients.ts';
import { newContext, type DbStats } from '#shared/context.ts';

/**
 * What a request costs in DynamoDB calls, the authorizer's and the handler's added up: each Lambda
 * counts its calls in the request context its edge made (shared/context.ts `stats`), and both
 * contexts carry the request id the gateway gave the request. A middleware of the product's
 * client (added from outside, as the commit barrier is) notes the counts of each context that
 * sends a call for a request being followed, and `take` adds them up once the request has
 * answered. Narrowed budgets share their request's counts, so each is added once.
 */
const followed = new Map<string, Set<DbStats>>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  onAwsClient((client) => {
    if (!(client instanceof DynamoDBClient)) return;
    client.middlewareStack.add(
      (next, context) => (args) => {
        const ctx = contextOfCall(context);
        const requestId = ctx?.log.request_id;
        if (ctx && requestId !== null && requestId !== undefined) followed.get(requestId)?.add(ctx.stats);
        return next(args);
      },
      { step: 'initialize', name: 'localRequestCosts' },
    );
  });
}

/** Starts noting the calls of the request `requestId` (a request id no other request has). */
export function follow(requestId: string): void {
  install();
  followed.set(requestId, new Set());
}

/** The request's calls, round trips and units, added up, and stops following it. */
export function take(requestId: string): DbStats {
  const total = newContext().stats;
  for (const stats of followed.get(requestId) ?? []) {
    total.calls += stats.calls;
    total.rcu += stats.rcu;
    total.wcu += stats.wcu;
    total.ops.push(...stats.ops);
  }
  followed.delete(requestId);
  return total;
}
