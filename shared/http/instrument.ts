import type { Context } from 'aws-lambda';
import { log, logs, requestLoggingEnabled, coldStartTracker, withLogFields } from '#shared/log.ts';
import { emitMetrics, metricFields, MetricUnit, type Unit } from '#shared/metrics.ts';
import { newContext, type RequestContext } from '#shared/context.ts';
import { findRoute, OAUTH_ROUTES } from './api-routes.ts';
import { withDeadline } from '#domain/time.ts';

type ApiEvent = {
  requestContext?: { requestId?: string } | null;
  httpMethod?: string;
  resource?: string;
  methodArn?: string;
};

/** The operation a metric is filed under: the route table's name, or `authorizer`. */
function operationOf(event: ApiEvent): string {
  if (event.methodArn !== undefined) return 'authorizer';
  return (
    findRoute(event.httpMethod ?? '', event.resource ?? '')?.operation ??
    OAUTH_ROUTES.find((r) => r.path === event.resource && r.method === event.httpMethod)?.operation ??
    'unknown'
  );
}

type RequestMetrics = { dimensions: Record<string, string>; values: [string, Unit, number][] };

/**
 * The request's metrics, dimension `operation`: Requests, Throttled (429 of the key's allowance or
 * write budget), Busy (429 `resource_busy`: a write that kept losing to other writers of its
 * record), Forbidden (403), ServerErrors (5xx), IdempotencyReplays, Latency. Busy is apart from
 * Throttled so that neither reads as the other: a hot record is not a key over its allowance. The
 * authorizer has metrics only when it refuses (Unauthorized, its 401, a thrown "Unauthorized"):
 * every request it lets through is counted by the handler, and its time by Lambda's own Duration;
 * 429 and 403 are answered, and counted, by the handler.
 */
function requestMetrics(
  ctx: RequestContext,
  event: ApiEvent,
  status: number | null,
  busy: boolean,
  threw: boolean,
  ms: number,
): RequestMetrics | undefined {
  const operation = operationOf(event);
  const count = (on: boolean) => (on ? 1 : 0);
  if (operation === 'authorizer') {
    return threw
      ? {
          dimensions: { operation },
          values: [
            ['Requests', MetricUnit.Count, 1],
            ['Unauthorized', MetricUnit.Count, 1],
            ['Latency', MetricUnit.Milliseconds, ms],
          ],
        }
      : undefined;
  }
  const code = threw ? 500 : (status ?? 200);
  return {
    dimensions: { operation },
    values: [
      ['Requests', MetricUnit.Count, 1],
      ['Throttled', MetricUnit.Count, count(code === 429 && !busy)],
      ['Busy', MetricUnit.Count, count(busy)],
      ['Forbidden', MetricUnit.Count, count(code === 403)],
      ['ServerErrors', MetricUnit.Count, count(code >= 500)],
      ['IdempotencyReplays', MetricUnit.Count, count(ctx.log.idempotency_replay === true)],
      ['Latency', MetricUnit.Milliseconds, ms],
    ],
  };
}

/**
 * One line per invocation: the request line with the metrics embedded (EMF reads `_aws` on any
 * line), at info; the authorizer's when it lets a request through at debug (the handler's line
 * names the key and store). CloudWatch Logs bills every byte, so a 2xx costs the access log line
 * and this one (docs/observability.md). Metrics without a line when the line is not printed.
 */
function emitRequest(
  authorizer: boolean,
  threw: boolean,
  line: Record<string, unknown> | undefined,
  metrics: RequestMetrics | undefined,
): void {
  const level = authorizer && !threw ? 'debug' : 'info';
  if (line && logs(level)) {
    log(level, 'request', { ...line, ...(metrics ? metricFields(metrics.dimensions, metrics.values) : undefined) });
  } else if (metrics) {
    emitMetrics(metrics.dimensions, metrics.values);
  }
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
  return typeof left === 'number' && Number.isFinite(left) && left > 0
    ? Math.max(0, Math.min(GATEWAY_BUDGET_MS, left - ANSWER_MARGIN_MS))
    : GATEWAY_BUDGET_MS;
}

/**
 * Wraps an API Lambda (endpoint group, MCP, authorizer): the edge where its request context is
 * made (shared/context.ts: the time budget `requestBudgetMs`, so retries stop and store calls are
 * abandoned before nobody listens; its DynamoDB counts; its log fields, request id, cold start,
 * then key and store) and handed to `fn`; its metrics, and one log line with its DynamoDB round
 * trips and units.
 */
export function instrument<E extends ApiEvent, R>(
  fn: (event: E, context: Context, ctx: RequestContext) => Promise<R>,
  describe: (event: E, result: R) => Record<string, unknown> = defaultDescription as never,
) {
  const isColdStart = coldStartTracker();
  return (event: E, context: Context): Promise<R> => {
    const fields = {
      request_id: event.requestContext?.requestId ?? context?.awsRequestId ?? null,
      function_name: context?.functionName ?? null,
      cold_start: isColdStart(),
    };
    const ctx = withDeadline(newContext(fields), requestBudgetMs(context));
    return withLogFields(ctx.log, async () => {
      const started = performance.now();
      let result: R | undefined;
      let threw = false;
      let line: Record<string, unknown> | undefined;
      try {
        result = await fn(event, context, ctx);
        if (requestLoggingEnabled()) {
          const { stats } = ctx;
          line = {
            ...describe(event, result),
            ms: Math.round(performance.now() - started),
            ddb_calls: stats.calls,
            ...(logs('debug') ? { ddb_ops: stats.ops.join(',') } : {}),
            rcu: stats.rcu,
            wcu: stats.wcu,
          };
        }
        return result;
      } catch (err) {
        threw = true;
        throw err;
      } finally {
        const answer = result as { statusCode?: unknown; body?: unknown } | undefined;
        const status = answer?.statusCode;
        const metrics = requestMetrics(
          ctx,
          event,
          typeof status === 'number' ? status : null,
          status === 429 && isBusy(answer?.body),
          threw,
          Math.round(performance.now() - started),
        );
        emitRequest(event.methodArn !== undefined, threw, line, metrics);
      }
    });
  };
}

/** Whether a 429's body is the `resource_busy` refusal (a small JSON error body, never compressed). */
function isBusy(body: unknown): boolean {
  return typeof body === 'string' && body.includes('"code":"resource_busy"');
}

function defaultDescription(
  event: { httpMethod?: string; path?: string },
  result: { statusCode?: number } | undefined,
) {
  return { method: event.httpMethod, path: event.path, status: result?.statusCode };
}
