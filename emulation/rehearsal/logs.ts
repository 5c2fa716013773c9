/**
 * CloudWatch Logs as far as the rehearsal's templates use it for reading: the lines the API
 * stage writes to its access log group (gateway.ts renders the stage's `AccessLogSetting`), kept
 * in memory, and Logs Insights' StartQuery / GetQueryResults over them, which the admin
 * function's `keys requests` sends (functions/admin/access-log-query.ts). The query language is
 * the subset that command uses (`fields`, `filter FIELD = "VALUE"`, `sort @timestamp`, `limit`);
 * anything else is refused as Insights refuses a query it cannot parse, so a query the code
 * changes to shows up here first. A query answers `Running` once before `Complete`, as a real
 * one takes a moment, so the caller's polling runs.
 */
import { randomUUID } from 'node:crypto';
import type { AuthorizationCheck, RequestTarget } from './aws-requests.ts';

interface LogEvent {
  timestamp: number;
  message: string;
}
type Field = { field: string; value: string };
type Answer = [status: number, body: Record<string, unknown>];

/** The log group name of an ARN (`arn:aws:logs:r:a:log-group:NAME:*`), or the name itself. */
export const logGroupName = (arnOrName: string) => /:log-group:([^:]+)/.exec(arnOrName)?.[1] ?? arnOrName;

/** CloudWatch Logs authorizes a log group's actions on its ARN with `:*`, the ARN templates grant. */
const groupArn = (t: Pick<RequestTarget, 'region' | 'account'>, name: string) =>
  `arn:aws:logs:${t.region}:${t.account}:log-group:${name}:*`;

export function logsChecks(
  t: Pick<RequestTarget, 'region' | 'account'>,
  operation: string,
  body: Record<string, unknown>,
): AuthorizationCheck[] {
  const action = `logs:${operation}`;
  if (operation !== 'StartQuery') return [{ action, resource: '*', context: {} }];
  const names = [
    body.logGroupName,
    ...((body.logGroupNames as string[] | undefined) ?? []),
    ...((body.logGroupIdentifiers as string[] | undefined) ?? []),
  ].filter((n): n is string => typeof n === 'string');
  return names.map((n) => ({ action, resource: groupArn(t, logGroupName(n)), context: {} }));
}

interface Query {
  fields: string[] | undefined;
  filter: [field: string, value: string] | undefined;
  descending: boolean;
  limit: number;
}

function parseQuery(text: string): Query | string {
  const q: Query = { fields: undefined, filter: undefined, descending: false, limit: 10_000 };
  for (const command of text.split('|').map((c) => c.trim())) {
    let m: RegExpExecArray | null;
    if ((m = /^fields\s+(.+)$/s.exec(command))) q.fields = m[1]!.split(',').map((f) => f.trim());
    else if ((m = /^filter\s+([@\w.]+)\s*=\s*"([^"\\]*)"$/.exec(command))) q.filter = [m[1]!, m[2]!];
    else if ((m = /^sort\s+@timestamp(?:\s+(asc|desc))?$/.exec(command))) q.descending = m[1] !== 'asc';
    else if ((m = /^limit\s+(\d+)$/.exec(command))) q.limit = Number(m[1]);
    else return `the rehearsal's Logs Insights does not take "${command}" (emulation/rehearsal/logs.ts)`;
  }
  return q;
}

/** Insights' @timestamp: `2026-11-25 04:37:31.123`, UTC. */
const stamp = (ms: number) => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

export class RehearsalLogs {
  private readonly groups = new Map<string, LogEvent[]>();
  private readonly queries = new Map<string, { results: Field[][]; scanned: number; polls: number }>();
  /** The templates' log groups: queryable before their first line. */
  readonly known = new Set<string>();

  append(group: string, message: string, timestamp = Date.now()): void {
    const name = logGroupName(group);
    const events = this.groups.get(name) ?? [];
    events.push({ timestamp, message });
    this.groups.set(name, events);
  }

  /** The AWS JSON answer to one CloudWatch Logs operation (`Logs_20140328.<operation>`). */
  answer(operation: string, body: Record<string, unknown>): Answer {
    if (operation === 'StartQuery') return this.start(body);
    if (operation === 'GetQueryResults') {
      const q = this.queries.get(String(body.queryId));
      if (!q) return [400, { __type: 'ResourceNotFoundException', message: `no query ${String(body.queryId)}` }];
      const statistics = { recordsMatched: q.results.length, recordsScanned: q.scanned, bytesScanned: 0 };
      if (q.polls++ === 0) return [200, { status: 'Running', results: [], statistics }];
      return [200, { status: 'Complete', results: q.results, statistics }];
    }
    return [
      400,
      {
        __type: 'InvalidOperationException',
        message: `the rehearsal answers StartQuery and GetQueryResults only, not ${operation}`,
      },
    ];
  }

  private start(body: Record<string, unknown>): Answer {
    const names = logsChecks({ region: '', account: '' }, 'StartQuery', body).map((c) => logGroupName(c.resource));
    if (names.length === 0) return [400, { __type: 'InvalidParameterException', message: 'no log group given' }];
    const missing = names.find((n) => !this.groups.has(n) && !this.known.has(n));
    if (missing !== undefined)
      return [
        400,
        { __type: 'ResourceNotFoundException', message: `The specified log group does not exist: ${missing}` },
      ];
    const query = parseQuery(String(body.queryString ?? ''));
    if (typeof query === 'string') return [400, { __type: 'MalformedQueryException', message: query }];
    const from = Number(body.startTime) * 1000;
    const to = Number(body.endTime) * 1000 + 999;
    const events = names
      .flatMap((n) => this.groups.get(n) ?? [])
      .filter((e) => e.timestamp >= from && e.timestamp <= to);
    const rows = events
      .map((e) => {
        let parsed: Record<string, unknown> = {};
        try {
          parsed = JSON.parse(e.message) as Record<string, unknown>;
        } catch {
          // Not JSON: only @timestamp and @message are fields.
        }
        return {
          e,
          fields: { ...parsed, '@timestamp': stamp(e.timestamp), '@message': e.message } as Record<string, unknown>,
        };
      })
      .filter((r) => !query.filter || String(r.fields[query.filter[0]] ?? '') === query.filter[1])
      .sort((a, b) => (query.descending ? b.e.timestamp - a.e.timestamp : a.e.timestamp - b.e.timestamp))
      .slice(0, Math.min(query.limit, Number(body.limit ?? 10_000)));
    const results = rows.map((r, i) => [
      ...(query.fields ?? ['@timestamp', '@message'])
        .filter((f) => r.fields[f] !== undefined && r.fields[f] !== null)
        .map((f) => ({ field: f, value: String(r.fields[f]) })),
      { field: '@ptr', value: `rehearsal-${i}` },
    ]);
    const queryId = randomUUID();
    this.queries.set(queryId, { results, scanned: events.length, polls: 0 });
    return [200, { queryId }];
  }
}
