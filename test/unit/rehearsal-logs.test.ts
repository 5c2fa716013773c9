import { describe, expect, it } from 'vitest';
import { renderAccessLog, requestTime } from '#emulation/rehearsal/access-log.ts';
import { logsChecks, RehearsalLogs } from '#emulation/rehearsal/logs.ts';
import { ACCESS_LOG_FIELDS } from '#infra/access-log-fields.ts';
import { accessLogQuery } from '#functions/admin/access-log-query.ts';

const GROUP_ARN = 'arn:aws:logs:us-east-1:000000000000:log-group:Api-AccessLogs1234:*';
const request = (over: Partial<Parameters<typeof renderAccessLog>[1]> = {}) => ({
  requestId: 'r-1',
  startedAt: new Date('2026-11-25T04:37:31.123Z'),
  latencyMs: 12,
  sourceIp: '127.0.0.1',
  userAgent: 'curl/8 "quoted"',
  httpMethod: 'GET',
  resourcePath: '/api/v1/integrations/products',
  path: '/prod/api/v1/integrations/products',
  status: 200,
  responseLength: 5,
  authorizer: { keyId: '7', storeId: 'shop' },
  errorType: undefined,
  ...over,
});

describe("the rehearsal's access log line", () => {
  it('renders our stage format as one JSON line, unknown values as "-"', () => {
    const line = JSON.parse(renderAccessLog(JSON.stringify(ACCESS_LOG_FIELDS), request()));
    expect(line).toMatchObject({
      request_id: 'r-1',
      time: '25/Nov/2026:04:37:31 +0000',
      method: 'GET',
      path: '/prod/api/v1/integrations/products',
      status: '200',
      key_id: '7',
      store_id: 'shop',
      error: '-',
      waf_status: '-',
      user_agent: 'curl/8 "quoted"',
    });
    expect(requestTime(new Date('2026-01-05T09:08:07Z'))).toBe('05/Jan/2026:09:08:07 +0000');
  });

  it('names the gateway response type of a refusal, and no key before the authorizer', () => {
    const line = JSON.parse(
      renderAccessLog(
        JSON.stringify(ACCESS_LOG_FIELDS),
        request({ status: 401, authorizer: {}, errorType: 'UNAUTHORIZED' }),
      ),
    );
    expect(line).toMatchObject({ status: '401', key_id: '-', error: 'UNAUTHORIZED' });
  });
});

describe("the rehearsal's Logs Insights", () => {
  const logs = new RehearsalLogs();
  const t0 = Date.parse('2026-11-25T04:00:00Z');
  for (const [i, key] of ['7', '8', '7'].entries()) {
    logs.append(
      GROUP_ARN,
      renderAccessLog(JSON.stringify(ACCESS_LOG_FIELDS), request({ requestId: `r-${i}`, authorizer: { keyId: key } })),
      t0 + i * 1000,
    );
  }
  const start = (queryString: string, extra: Record<string, unknown> = {}) =>
    logs.answer('StartQuery', {
      logGroupName: 'Api-AccessLogs1234',
      startTime: t0 / 1000 - 60,
      endTime: t0 / 1000 + 60,
      queryString,
      ...extra,
    });

  it("answers the admin's query: Running once, then the key's lines newest first with the asked fields", () => {
    const [status, started] = start(accessLogQuery(7, 100));
    expect(status).toBe(200);
    expect(logs.answer('GetQueryResults', { queryId: started.queryId })[1]).toMatchObject({
      status: 'Running',
      results: [],
    });
    const [, done] = logs.answer('GetQueryResults', { queryId: started.queryId });
    const rows = (done.results as { field: string; value: string }[][]).map((r) =>
      Object.fromEntries(r.map((f) => [f.field, f.value])),
    );
    expect(done.status).toBe('Complete');
    expect(rows.map((r) => [r.request_id, r['@timestamp']])).toEqual([
      ['r-2', '2026-11-25 04:00:02.000'],
      ['r-0', '2026-11-25 04:00:00.000'],
    ]);
    expect(Object.keys(rows[0]!).sort()).toEqual([
      '@ptr',
      '@timestamp',
      'error',
      'latency_ms',
      'method',
      'path',
      'request_id',
      'status',
    ]);
  });

  it('honours the limit and the time window', () => {
    const results = (q: Record<string, unknown>) => {
      logs.answer('GetQueryResults', q);
      return (logs.answer('GetQueryResults', q)[1].results as unknown[]).length;
    };
    expect(results(start(accessLogQuery(7, 1))[1])).toBe(1);
    expect(results(start(accessLogQuery(7, 100), { startTime: t0 / 1000 + 1 })[1])).toBe(1);
  });

  it('refuses what Insights would: a query it does not parse, an unknown group or query', () => {
    expect(start('fields @message | stats count(*) by key_id')).toMatchObject([
      400,
      { __type: 'MalformedQueryException' },
    ]);
    expect(
      logs.answer('StartQuery', { logGroupName: 'nope', startTime: 0, endTime: 1, queryString: 'limit 1' }),
    ).toMatchObject([400, { __type: 'ResourceNotFoundException' }]);
    expect(logs.answer('GetQueryResults', { queryId: 'x' })).toMatchObject([
      400,
      { __type: 'ResourceNotFoundException' },
    ]);
  });

  it("asks IAM for StartQuery on the group's ARN and GetQueryResults on *", () => {
    const t = { region: 'us-east-1', account: '000000000000' };
    expect(logsChecks(t, 'StartQuery', { logGroupName: 'Api-AccessLogs1234' })).toEqual([
      { action: 'logs:StartQuery', resource: GROUP_ARN, context: {} },
    ]);
    expect(logsChecks(t, 'GetQueryResults', { queryId: 'q' })).toEqual([
      { action: 'logs:GetQueryResults', resource: '*', context: {} },
    ]);
  });
});
