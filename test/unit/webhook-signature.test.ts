import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { secretKey, sign, signedHeaders } from '#domain/webhook/signature.ts';

/** The test vectors of docs/webhooks.md; a receiver's implementation must reproduce them. */
const VECTOR = {
  secret: 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=',
  previousSecret: 'whsec_q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=',
  id: 'evt_5f0c1e2d3b4a59687766554433221100',
  timestamp: 1795312800,
  body: '{"type":"order.status_changed","timestamp":"2026-11-22T01:20:00.000Z","data":{"order":{"id":42,"reference":"ORD-1042","status":"shipped"},"previous_status":"processing","status":"shipped"}}',
  signature: 'v1,xj0t1++xc1KnHCFqpjUnyLxod0acSEe9ZPOgDcGChCE=',
  previousSignature: 'v1,fFL89H7J8WEmtM+6ZCkiJtZaHDlxpDzNea30ybIAkR4=',
};

describe('Standard Webhooks signing', () => {
  afterEach(() => vi.useRealTimers());

  it('reproduces the documented test vectors', () => {
    expect(sign(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
    expect(sign(VECTOR.previousSecret, VECTOR.id, VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.previousSignature);
  });

  it('matches the example of the Standard Webhooks specification', () => {
    expect(
      sign(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('is byte-identical to the standardwebhooks package for any secret, id, time and body', () => {
    for (let i = 0; i < 50; i++) {
      const secret = `whsec_${Buffer.from(Array.from({ length: 24 + i }, (_, j) => (i * 31 + j * 7) % 256)).toString('base64')}`;
      const id = `evt_${i.toString(16).padStart(32, '0')}`;
      const ts = 1_700_000_000 + i * 9_999;
      const body = JSON.stringify({ i, text: 'ünïcødé ✓ "quoted" \\ \n', nested: { list: [i, null, true] } });
      expect(sign(secret, id, ts, body)).toBe(new Webhook(secret).sign(id, new Date(ts * 1000), body));
    }
  });

  it('builds the three headers, newest secret first, and a receiver accepts either secret', () => {
    vi.useFakeTimers({ now: VECTOR.timestamp * 1000 + 30_000 });
    const headers = signedHeaders([VECTOR.secret, VECTOR.previousSecret], VECTOR.id, VECTOR.timestamp, VECTOR.body);
    expect(headers).toEqual({
      'webhook-id': VECTOR.id,
      'webhook-timestamp': String(VECTOR.timestamp),
      'webhook-signature': `${VECTOR.signature} ${VECTOR.previousSignature}`,
    });
    const payload = JSON.parse(VECTOR.body);
    expect(new Webhook(VECTOR.secret).verify(VECTOR.body, { ...headers })).toEqual(payload);
    expect(new Webhook(VECTOR.previousSecret).verify(VECTOR.body, { ...headers })).toEqual(payload);
    expect(() =>
      new Webhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(VECTOR.body, { ...headers }),
    ).toThrow();
    // A changed body or timestamp no longer verifies.
    expect(() => new Webhook(VECTOR.secret).verify(VECTOR.body.replace('42', '43'), { ...headers })).toThrow();
    expect(() =>
      new Webhook(VECTOR.secret).verify(VECTOR.body, { ...headers, 'webhook-timestamp': String(VECTOR.timestamp + 1) }),
    ).toThrow();
  });

  it('refuses to sign without a secret', () => {
    expect(() => signedHeaders([], VECTOR.id, VECTOR.timestamp, VECTOR.body)).toThrow(/no webhook secret/);
    expect(() => secretKey('whsec_')).toThrow(/empty/);
  });

  it('is verified by the plain node:crypto receiver of docs/webhooks.md', () => {
    // Copied from the docs, so that the snippet we hand to integrators is known to work.
    function verifyPlain(secret: string, headers: Record<string, string>, rawBody: string) {
      const id = headers['webhook-id'],
        ts = headers['webhook-timestamp'];
      if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) throw new Error('stale timestamp');
      const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
      const expected = Buffer.from(createHmac('sha256', key).update(`${id}.${ts}.${rawBody}`).digest('base64'));
      const ok = (headers['webhook-signature'] ?? '').split(' ').some((s) => {
        const given = Buffer.from(s.slice(s.indexOf(',') + 1));
        return s.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
      });
      if (!ok) throw new Error('bad signature');
      return JSON.parse(rawBody);
    }
    vi.useFakeTimers({ now: VECTOR.timestamp * 1000 });
    const headers = {
      ...signedHeaders([VECTOR.secret, VECTOR.previousSecret], VECTOR.id, VECTOR.timestamp, VECTOR.body),
    };
    expect(verifyPlain(VECTOR.secret, headers, VECTOR.body)).toEqual(JSON.parse(VECTOR.body));
    expect(verifyPlain(VECTOR.previousSecret, headers, VECTOR.body)).toEqual(JSON.parse(VECTOR.body));
    expect(() => verifyPlain(VECTOR.secret, headers, VECTOR.body + ' ')).toThrow('bad signature');
    vi.setSystemTime((VECTOR.timestamp + 301) * 1000);
    expect(() => verifyPlain(VECTOR.secret, headers, VECTOR.body)).toThrow('stale timestamp');
  });
});
