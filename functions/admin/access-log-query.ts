import type { CloudWatchLogsClient, ResultField } from '@aws-sdk/client-cloudwatch-logs';
import { DomainError } from '#domain/errors.ts';
import type { RequestRow } from './request-commands.ts';

/**
 * A key's recent requests in AWS: one CloudWatch Logs Insights query over the API's access log
 * group (ACCESS_LOG_GROUP; one JSON line per request, infra/access-log-fields.ts).
 * Insights bills by the bytes it scans, so the window is the last day, not the month kept.
 */
export const ACCESS_LOG_WINDOW_HOURS = 24;
/** Under the admin Lambda's 30 s timeout, with room to answer. */
const QUERY_DEADLINE_MS = 20_000;
const POLL_MS = 500;

/**
 * Loaded on the first query, not with the admin function: every other admin command (and a
 * cold start) would otherwise import the CloudWatch Logs client for nothing. A static import
 * here would be one in the bundle too: esbuild inlines request-commands' `import()` of this
 * module and hoists its external imports to the bundle's top.
 */
const sdk = () => import('@aws-sdk/client-cloudwatch-logs');
let client: CloudWatchLogsClient | undefined;

/** The query; `keyId` is a validated integer, so nothing from outside reaches the query text. */
export function accessLogQuery(keyId: number, limit: number): string {
  if (!Number.isSafeInteger(keyId) || !Number.isSafeInteger(limit))
    throw new Error('key id and limit must be integers');
  return `fields @timestamp, request_id, method, path, status, error, latency_ms | filter key_id = "${keyId}" | sort @timestamp desc | limit ${limit}`;
}

/** API Gateway writes `-` for a value it does not have (no error, no latency). */
const present = (v: string | undefined) => (v === undefined || v === '' || v === '-' ? null : v);

/** `2026-11-25 04:37:31.123` (Insights' @timestamp, UTC) as ISO 8601. */
const isoOf = (stamp: string) =>
  /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$/.test(stamp) ? `${stamp.replace(' ', 'T')}Z` : stamp;

export function rowOf(fields: ResultField[]): RequestRow {
  const f = Object.fromEntries(fields.map((x) => [x.field ?? '', x.value ?? '']));
  const latency = present(f.latency_ms);
  return {
    time: isoOf(f['@timestamp'] ?? ''),
    method: f.method ?? '',
    path: f.path ?? '',
    status: Number(f.status),
    // The access log knows only API Gateway's own error type (UNAUTHORIZED, ACCESS_DENIED, ...);
    // a code the handler answered is in the function's log under the same request id.
    error_code: present(f.error),
    request_id: f.request_id ?? '',
    latency_ms: latency === null ? null : Number(latency),
  };
}

export async function queryAccessLog(logGroupName: string, keyId: number, limit: number): Promise<RequestRow[]> {
  const { CloudWatchLogsClient, GetQueryResultsCommand, StartQueryCommand } = await sdk();
  client ??= new CloudWatchLogsClient({});
  const now = Date.now();
  const { queryId } = await client.send(
    new StartQueryCommand({
      logGroupName,
      startTime: Math.floor((now - ACCESS_LOG_WINDOW_HOURS * 3_600_000) / 1000),
      endTime: Math.ceil(now / 1000),
      queryString: accessLogQuery(keyId, limit),
      limit,
    }),
  );
  const deadline = now + QUERY_DEADLINE_MS;
  for (;;) {
    const out = await client.send(new GetQueryResultsCommand({ queryId }));
    if (out.status === 'Complete') return (out.results ?? []).map(rowOf);
    if (out.status !== 'Running' && out.status !== 'Scheduled') {
      throw new DomainError(
        'service_unavailable',
        `the access log query ended ${out.status ?? 'without a status'}; try again`,
        null,
      );
    }
    if (Date.now() + POLL_MS > deadline) {
      throw new DomainError(
        'service_unavailable',
        `the access log query did not finish within ${QUERY_DEADLINE_MS / 1000} s; try again`,
        null,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
