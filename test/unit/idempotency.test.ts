import { describe, expect, it } from 'vitest';
import { canonicalJson, parseIdempotencyKey, requestFingerprint } from '#domain/idempotency.ts';
import { classifyExisting, idempotencyRecordKey } from '#db/idempotency/repo.ts';
import { answered, checkRecord, idempotentRequest, prepareAnswer } from '#app/idempotent-commit.ts';

describe('Idempotency-Key header', () => {
  it.each([
    ['abc', 'abc'],
    ['  abc\t', 'abc'],
    ['"abc"', 'abc'],
    ['"a b c"', 'a b c'],
    ['"a\\"b"', 'a"b'],
    ['"a\\\\b"', 'a\\b'],
    ['6f1c7c1e-8c1b-4a43-9b6e-0b1f0e2f3a4b', '6f1c7c1e-8c1b-4a43-9b6e-0b1f0e2f3a4b'],
    ['a"b', 'a"b'],
    ['k'.repeat(255), 'k'.repeat(255)],
    [`"${'k'.repeat(255)}"`, 'k'.repeat(255)],
  ])('reads %j as %j', (raw, key) => {
    expect(parseIdempotencyKey(raw)).toEqual({ ok: true, key });
  });

  it.each([undefined, '', '   ', '""', '\t'])('calls %j missing', (raw) => {
    expect(parseIdempotencyKey(raw)).toMatchObject({ ok: false, reason: 'missing' });
  });

  it.each([
    'k'.repeat(256),
    `"${'k'.repeat(256)}"`,
    '"abc',
    '"abc"def',
    '"a\\bc"',
    '"a\\"',
    '"tab\there"',
    'ümlaut',
    'line\nbreak',
  ])('calls %j invalid', (raw) => {
    expect(parseIdempotencyKey(raw)).toMatchObject({ ok: false, reason: 'invalid' });
  });
});

describe('request fingerprint', () => {
  it('ignores key order and whitespace, not values', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"y":2,"z":1}]},"b":1}',
    );
    expect(requestFingerprint(JSON.parse('{ "status" : "shipped" }'))).toBe(requestFingerprint({ status: 'shipped' }));
    expect(requestFingerprint({ status: 'shipped', x: 1 })).toBe(requestFingerprint({ x: 1, status: 'shipped' }));
    expect(requestFingerprint({ status: 'shipped' })).not.toBe(requestFingerprint({ status: 'delivered' }));
    expect(requestFingerprint(undefined)).not.toBe(requestFingerprint({}));
  });
});

describe('stored responses replay byte for byte', () => {
  it('JSON.stringify(JSON.parse(s)) === s for what JSON.stringify produced', () => {
    const bodies = [
      {
        data: {
          id: 1,
          reference: 'R',
          customer: { name: 'Zoë "Q" \\ \u2028', email: 'a@b', phone: null },
          items: [],
          total: 1e21,
          paid_total: -0,
        },
      },
      { code: 'invalid_transition', message: 'An order cannot move from shipped to pending.', field: 'status' },
      { '2': 'numeric keys first', b: 1, '1': 0, a: [0.1, 1 / 3, 5e-324, '\ud800'] },
    ];
    for (const body of bodies) {
      const sent = JSON.stringify(body);
      expect(JSON.stringify(JSON.parse(sent))).toBe(sent);
    }
  });
});

describe('idempotency records', () => {
  const now = Date.parse('2026-01-01T12:00:00.000Z');
  const sec = Math.floor(now / 1000);
  const base = { fingerprint: 'fp', ttl: sec + 100 };

  it('replays a completed record with the same fingerprint', () => {
    expect(
      classifyExisting({ ...base, state: 'completed', response_status: 409, response_body: '{"x":1}' }, 'fp', now),
    ).toEqual({
      kind: 'replay',
      response: { status: 409, body: '{"x":1}' },
    });
  });

  it('calls another fingerprint a reuse, finished or not', () => {
    expect(
      classifyExisting({ ...base, state: 'completed', response_status: 200, response_body: '{}' }, 'other', now),
    ).toEqual({ kind: 'reused' });
    expect(classifyExisting({ ...base, state: 'in_progress', lease_expires_at: now + 1000 }, 'other', now)).toEqual({
      kind: 'reused',
    });
  });

  it('reports a live lease as in progress, and an expired lease or record as free', () => {
    expect(classifyExisting({ ...base, state: 'in_progress', lease_expires_at: now + 1 }, 'fp', now)).toEqual({
      kind: 'in_progress',
    });
    expect(classifyExisting({ ...base, state: 'in_progress', lease_expires_at: now }, 'fp', now)).toBeUndefined();
    expect(
      classifyExisting(
        { ...base, ttl: sec, state: 'completed', response_status: 200, response_body: '{}' },
        'other',
        now,
      ),
    ).toBeUndefined();
    expect(classifyExisting(undefined, 'fp', now)).toBeUndefined();
  });

  it('scopes by key id, method, path and key, and hashes an over-long path', () => {
    const k = idempotencyRecordKey({
      keyId: 3,
      method: 'POST',
      path: '/api/v1/integrations/orders/R-1/status',
      key: 'abc',
    });
    expect(k).toEqual({ pk: 'KEY#3', sk: 'IDEMPOTENCY#POST /api/v1/integrations/orders/R-1/status#abc' });
    const long = idempotencyRecordKey({
      keyId: 3,
      method: 'POST',
      path: '/x/' + 'a'.repeat(2000),
      key: 'k'.repeat(255),
    });
    expect(Buffer.byteLength(long.sk)).toBeLessThan(1024);
    expect(long.sk).toMatch(/^IDEMPOTENCY#POST sha256:/);
  });
});

describe('canonicalJson on hostile shapes', () => {
  it('writes a 100,000-deep array without overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const text = canonicalJson({ status: deep });
    expect(text.length).toBe('{"status":'.length + 200_001 + 1);
  });

  it('writes a 100,000-element array', () => {
    expect(canonicalJson(new Array(100_000).fill(0)).length).toBe(199_999 + 2);
  });

  it('spells a key named __proto__ like any other key', () => {
    expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":1}}'))).toBe('{"__proto__":{"x":1},"b":1}');
  });
});

describe('idempotency as a step of the use case: outcomes, not exceptions', () => {
  const scope = { keyId: 3, method: 'POST', path: '/api/v1/integrations/orders/R-1/status', key: 'abc' };
  const request = idempotentRequest(scope, { status: 'shipped' });
  const ttl = Math.floor(Date.now() / 1000) + 100;

  it('is one request for no body and for {}, and another for another body', () => {
    expect(idempotentRequest(scope, undefined)).toEqual(idempotentRequest(scope, {}));
    expect(idempotentRequest(scope, { status: 'paid' }).fingerprint).not.toBe(request.fingerprint);
    expect(request.recordKey).toEqual(idempotencyRecordKey(scope));
  });

  it('returns fresh for a free key and the refusal itself for a taken one, as values', () => {
    expect(checkRecord(request, undefined)).toEqual({ kind: 'fresh' });
    const completed = { fingerprint: request.fingerprint, ttl, state: 'completed', response_status: 200 };
    expect(checkRecord(request, { ...completed, response_body: '{"data":1}' })).toEqual({
      kind: 'replay',
      response: { status: 200, body: '{"data":1}' },
    });
    expect(checkRecord(request, { ...completed, fingerprint: 'other', response_body: '{}' })).toEqual({
      kind: 'reused',
    });
  });

  it('commits the answer it sends: the stored bytes are the body the use case answers', () => {
    const prepared = prepareAnswer(request, { body: { data: { b: 1, a: [2] } } });
    expect(prepared.response).toEqual({ status: 200, body: '{"data":{"b":1,"a":[2]}}' });
    expect(prepared.write.Put?.Item).toMatchObject({ ...request.recordKey, response_body: prepared.response.body });
    expect(answered({ data: 1 }, prepared.response)).toEqual({
      kind: 'answered',
      answer: { data: 1 },
      stored: prepared.response,
    });
  });
});
