import type { Context } from 'aws-lambda';
import { currentDbStats, withDbStats } from '../db/client.ts';
import { log, requestLoggingEnabled } from '../log.ts';
import { coldStartTracker, invocationContext, withInvocationContext } from '../log-context.ts';
import { emitMetrics, MetricUnit } from '../metrics.ts';
import { findRoute } from './api-routes.ts';
import { withDeadline } from '../domain/deadline.ts';

type ApiEvent = { requestContext?: { requestId?: string } | null; httpMethod?: string; resource?: string; methodArn?: string };

/** The operation a metric is filed under: the route table's name, or `authorizer`. */
function operationOf(event: ApiEvent): string {
  if (event.methodArn !== undefined) return 'authorizer';
  return findRoute(event.httpMethod ?? '', event.resource ?? '')?.operation ?? 'unknown';
}

/**
 * One EMF line per request: dimension `operation`; Requests, Throttled (429), Forbidden (403),
 * ServerErrors (5xx), IdempotencyReplays, Latency. The authorizer's line counts Unauthorized
 * (its 401, a thrown "Unauthorized"); 429 and 403 are answered, and counted, by the handler.
 */
function requestMetrics(event: ApiEvent, status: number | null, threw: boolean, ms: number): void {
  const operation = operationOf(event);
  const count = (on: boolean) => (on ? 1 : 0);
  if (operation === 'authorizer') {
    emitMetrics({ operation }, [['Requests', MetricUnit.Count, 1], ['Unauthorized', MetricUnit.Count, count(threw)], ['Latency', MetricUnit.Milliseconds, ms]]);
    return;
  }
  const code = threw ? 500 : (status ?? 200);
  emitMetrics({ operation }, [
    ['Requests', MetricUnit.Count, 1],
    ['Throttled', MetricUnit.Count, count(code === 429)],
    ['Forbidden', MetricUnit.Count, count(code === 403)],
    ['ServerErrors', MetricUnit.Count, count(code >= 500)],
    ['IdempotencyReplays', MetricUnit.Count, count(invocationContext().idempotency_replay === true)],
    ['Latency', MetricUnit.Milliseconds, ms],
  ]);
}

/**
 * API Gateway answers 29 s after a request reaches it, whatever the Lambda still does. 4 s of
 * that are kept for the authorizer, a cold start and the way back, so a request's work must be
 * done (or refused) within 25 s.
 */
export const GATEWAY_BUDGET_MS = 25_000;
/** Kept back from the function's own timeout to send the answer in. */
const ANSWER_MARGIN_MS = 500;

/**
 * middy's own early timeout is off: it answers 500 a few ms before the function's timeout while
 * the handler runs on (and its writes land), the very thing the request budget exists to
 * prevent. The budget stops the work in time and answers truthfully instead.
 */
export const NO_EARLY_TIMEOUT = { timeoutEarlyInMillis: 0 } as const;

/** The time budget of one API request: the gateway's, or less when the function's timeout comes first. */
export function requestBudgetMs(context?: Pick<Context, 'getRemainingTimeInMillis'>): number {
  const left = context?.getRemainingTimeInMillis?.();
  return typeof left === 'number' && Number.isFinite(left) && left > 0 ? Math.max(0, Math.min(GATEWAY_BUDGET_MS, left - ANSWER_MARGIN_MS)) : GATEWAY_BUDGET_MS;
}

/**
 * Wraps an API Lambda (endpoint group, MCP, authorizer): its log context (request id, cold
 * start, then key and store), its metrics, and one log line with its DynamoDB round trips and
 * units. Under the local gateway the DynamoDB cost of the whole request (authorizer + handler)
 * is measured, and logged, by the gateway. The request runs within its time budget
 * (`requestBudgetMs`): retries stop, and SDK calls are abandoned, before nobody listens.
 */
export function instrument<E extends ApiEvent, R>(
  fn: (event: E, context: Context) => Promise<R>,
  describe: (event: E, result: R) => Record<string, unknown> = defaultDescription as never,
) {
  const isColdStart = coldStartTracker();
  return (event: E, context: Context): Promise<R> =>
    withDeadline(requestBudgetMs(context), () => withInvocationContext(
      {
        request_id: event.requestContext?.requestId ?? context?.awsRequestId ?? null,
        function_name: context?.functionName ?? null,
        cold_start: isColdStart(),
        key_id: null,
        store_id: null,
      },
      async () => {
        const started = performance.now();
        let result: R | undefined;
        let threw = false;
        try {
          if (currentDbStats()) return (result = await fn(event, context));
          const measured = await withDbStats(() => fn(event, context));
          result = measured.result;
          if (requestLoggingEnabled()) {
            const { stats } = measured;
            log('info', 'request', {
              ...describe(event, result),
              ms: Math.round(performance.now() - started),
              ddb_calls: stats.calls,
              ddb_ops: stats.ops.join(','),
              rcu: stats.rcu,
              wcu: stats.wcu,
            });
          }
          return result;
        } catch (err) {
          threw = true;
          throw err;
        } finally {
          const status = (result as { statusCode?: unknown } | undefined)?.statusCode;
          requestMetrics(event, typeof status === 'number' ? status : null, threw, Math.round(performance.now() - started));
        }
      },
    ));
}

function defaultDescription(event: { httpMethod?: string; path?: string }, result: { statusCode?: number } | undefined) {
  return { method: event.httpMethod, path: event.path, status: result?.statusCode };
}
