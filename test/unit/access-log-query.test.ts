import { describe, expect, it } from 'vitest';
import { accessLogQuery, rowOf } from '#functions/admin/access-log-query.ts';

describe('keys requests in AWS: the Logs Insights query and its rows', () => {
  it('filters by the key id, newest first, bounded by the limit', () => {
    expect(accessLogQuery(42, 100)).toBe(
      'fields @timestamp, request_id, method, path, status, error, latency_ms | filter key_id = "42" | sort @timestamp desc | limit 100',
    );
  });

  it('takes nothing but integers into the query text', () => {
    expect(() => accessLogQuery('1" or key_id like /./' as unknown as number, 10)).toThrow(/integers/);
    expect(() => accessLogQuery(1, 1.5)).toThrow(/integers/);
  });

  it('turns a result row into the console\'s row: ISO time, numbers, "-" as none', () => {
    const row = (fields: Record<string, string>) =>
      rowOf(Object.entries(fields).map(([field, value]) => ({ field, value })));
    expect(
      row({
        '@timestamp': '2026-11-25 04:37:31.123',
        request_id: 'r-1',
        method: 'GET',
        path: '/api/v1/integrations/products',
        status: '200',
        error: '-',
        latency_ms: '41',
        '@ptr': 'x',
      }),
    ).toEqual({
      time: '2026-11-25T04:37:31.123Z',
      method: 'GET',
      path: '/api/v1/integrations/products',
      status: 200,
      error_code: null,
      request_id: 'r-1',
      latency_ms: 41,
    });
    expect(
      row({ '@timestamp': '2026-11-25 04:37:31.000', status: '403', error: 'ACCESS_DENIED', latency_ms: '-' }),
    ).toMatchObject({ status: 403, error_code: 'ACCESS_DENIED', latency_ms: null });
  });
});
