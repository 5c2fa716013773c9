import { describe, expect, it } from 'vitest';
import { DomainError, ERROR_CODES } from '#domain/errors.ts';
import { FAULT_CODES, isFault, refused } from '#domain/outcome.ts';
import { errorResponse, OUTCOME_TABLE, problemOf } from '#http/error-status.ts';
import { toolError } from '#functions/mcp/server.ts';

describe('the outcome table (shared/http/error-status.ts)', () => {
  it('answers every code a caller can cause below 500 and every fault at 500 or above', () => {
    for (const code of ERROR_CODES) {
      expect(OUTCOME_TABLE[code].status >= 500, code).toBe(isFault(code));
    }
    expect(FAULT_CODES.every((c) => ERROR_CODES.includes(c))).toBe(true);
  });

  it('tells the caller when to come back on exactly the 429s, the 503 and a twin in progress', () => {
    const withRetryAfter = ERROR_CODES.filter((c) => OUTCOME_TABLE[c].retryAfter).sort();
    expect(withRetryAfter).toEqual(
      [
        'idempotency_in_progress',
        'rate_limited',
        'resource_busy',
        'service_unavailable',
        'write_budget_exceeded',
      ].sort(),
    );
  });

  it('presents a refusal over HTTP with its status, the JSON body and Retry-After', () => {
    const answer = errorResponse(refused('resource_busy', 'Product 7 is busy.', null, 1));
    expect(answer.statusCode).toBe(429);
    expect(answer.headers).toMatchObject({ 'Retry-After': '1', 'Content-Type': 'application/json' });
    expect(JSON.parse(answer.body)).toEqual({ code: 'resource_busy', message: 'Product 7 is busy.', field: null });
  });

  it('sends no Retry-After for a code the table gives none, whatever the outcome carries', () => {
    const answer = errorResponse(refused('not_found', 'No such product.', null, 5));
    expect(answer.statusCode).toBe(404);
    expect(answer.headers).not.toHaveProperty('Retry-After');
  });

  it('presents a thrown DomainError as it is and anything else as internal_error with the request id', () => {
    const thrown = new DomainError('conflict', 'Taken.', 'id');
    expect(problemOf(thrown, 'req-1')).toBe(thrown);
    expect(problemOf(new TypeError('x is undefined'), 'req-2')).toEqual({
      code: 'internal_error',
      message: 'Something went wrong on our side. Request id: req-2.',
      field: null,
    });
  });

  it('presents the same outcome as an MCP tool error with the argument name the tool caller sent', () => {
    const result = toolError(refused('validation_failed', 'filter[name]: too long', 'filter[name]'), {
      'filter[name]': 'filter_name',
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toEqual({
      code: 'validation_failed',
      message: 'filter_name: too long',
      field: 'filter_name',
    });
  });
});
