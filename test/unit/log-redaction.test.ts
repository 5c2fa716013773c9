import { afterEach, describe, expect, it } from 'vitest';
import { log, redactQuery, setLogSink } from '#shared/log.ts';

describe('credentials in URLs never reach a log line', () => {
  afterEach(() => setLogSink((line) => process.stdout.write(line + '\n')));

  it('redacts the values of credential-named query parameters and keeps the others', () => {
    expect(redactQuery('?access_token=sia_x&page=2')).toBe('?access_token=[redacted]&page=2');
    expect(redactQuery('?page=2&token=a&api_key=b&key=c&X-Amz-Signature=d&apiKey=e')).toBe(
      '?page=2&token=[redacted]&api_key=[redacted]&key=[redacted]&X-Amz-Signature=[redacted]&apiKey=[redacted]',
    );
    expect(redactQuery('?access%5Ftoken=sia_x')).toBe('?access%5Ftoken=[redacted]');
    expect(redactQuery('?filter%5Bname%5D=key&monkey=1&page')).toBe('?filter%5Bname%5D=key&monkey=1&page');
    expect(redactQuery('')).toBe('');
  });

  it('redacts a URL inside any string field or message of a structured line', () => {
    const lines: string[] = [];
    setLogSink((line) => lines.push(line));
    log('error', 'GET /products?access_token=sia_secret1 failed', {
      url: 'http://127.0.0.1:3000/x?token=sia_secret2&page=1',
      note: 'plain?text',
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(/sia_secret/);
    const line = JSON.parse(lines[0]!);
    expect(line.msg).toBe('GET /products?access_token=[redacted] failed');
    expect(line.url).toBe('http://127.0.0.1:3000/x?token=[redacted]&page=1');
    expect(line.note).toBe('plain?text');
  });
});
