import { describe, expect, it } from 'vitest';
import { eventBody, parseDeliveryMessage, signingSecrets } from '#domain/webhook/delivery.ts';
import { isAllowedWebhookAddress } from '#domain/webhook/address-policy.ts';
import { pinnedLookup } from '#domain/webhook/pinned-lookup.ts';

describe('webhook delivery rules', () => {
  it('lays the body out in contract order whatever order the stored map had', () => {
    const shuffled = {
      data: {
        status: 'shipped',
        order: {
          updated_at: 'u',
          id: 1,
          customer: { phone: null, email: 'e', name: 'n' },
          items: [{ total: 2, sku: 's', product_id: 1 }],
          reference: 'R',
        },
        previous_status: 'processing',
      },
      timestamp: 't',
      type: 'order.status_changed',
    };
    expect(eventBody(shuffled)).toBe(
      '{"type":"order.status_changed","timestamp":"t","data":{"order":{"id":1,"reference":"R","customer":{"name":"n","email":"e","phone":null},"items":[{"product_id":1,"sku":"s","total":2}],"updated_at":"u"},"previous_status":"processing","status":"shipped"}}',
    );
  });

  it('keeps unknown fields, after the known ones', () => {
    expect(eventBody({ z: 1, type: 'x', a: 2 })).toBe('{"type":"x","a":2,"z":1}');
  });

  it('signs with the previous secret only during its grace period', () => {
    const now = new Date('2026-11-22T00:00:00.000Z');
    const key = (expires: string | null) => ({
      webhook_secret: 'new',
      previous_webhook_secret: expires ? 'old' : null,
      previous_webhook_secret_expires_at: expires,
    });
    expect(signingSecrets(key('2026-11-22T23:59:59.000Z'), now)).toEqual(['new', 'old']);
    expect(signingSecrets(key('2026-11-22T00:00:00.000Z'), now)).toEqual(['new']);
    expect(signingSecrets(key(null), now)).toEqual(['new']);
  });

  it('reads queue messages strictly', () => {
    expect(parseDeliveryMessage('{"event_id":"evt_1","key_id":3,"round":0}')).toEqual({
      event_id: 'evt_1',
      key_id: 3,
      round: 0,
    });
    expect(() => parseDeliveryMessage('{"event_id":"evt_1","key_id":"3","round":0}')).toThrow();
    expect(() => parseDeliveryMessage('not json')).toThrow();
    expect(
      parseDeliveryMessage('{"event_id":"evt_1","key_id":3,"round":1,"due_at":"2026-11-22T00:00:00.000Z"}'),
    ).toEqual({
      event_id: 'evt_1',
      key_id: 3,
      round: 1,
      due_at: '2026-11-22T00:00:00.000Z',
    });
    expect(() => parseDeliveryMessage('{"event_id":"evt_1","key_id":3,"round":1,"due_at":"soon"}')).toThrow();
  });
});

describe('SSRF at delivery: where a webhook may connect', () => {
  it('admits public addresses only', () => {
    for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'])
      expect(isAllowedWebhookAddress(a, false)).toBe(true);
    for (const a of [
      '127.0.0.1',
      '10.0.0.8',
      '172.16.3.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:169.254.169.254',
      '64:ff9b::a9fe:a9fe',
    ]) {
      expect(isAllowedWebhookAddress(a, false), a).toBe(false);
    }
  });

  it('admits loopback, and nothing else private, when the local stack allows private webhooks', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])
      expect(isAllowedWebhookAddress(a, true), a).toBe(true);
    for (const a of ['10.0.0.8', '192.168.1.1', '169.254.169.254', 'fd00:ec2::254', '0.0.0.0'])
      expect(isAllowedWebhookAddress(a, true), a).toBe(false);
  });

  const lookup = (allowLoopback: boolean, host: string, all: boolean) =>
    new Promise<{ err: Error | null; result: unknown }>((resolve) => {
      pinnedLookup(allowLoopback)(
        host,
        { all } as never,
        ((err: Error | null, address: unknown, family?: number) =>
          resolve({ err, result: all ? address : { address, family } })) as never,
      );
    });

  it('refuses a name that resolves to loopback, at lookup time', async () => {
    const { err } = await lookup(false, 'localhost', true);
    expect(err?.message).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), which is not a public address$/);
  });

  it('hands the socket exactly the addresses it checked (both lookup styles)', async () => {
    const all = await lookup(true, 'localhost', true);
    expect(all.err).toBeNull();
    expect((all.result as { address: string }[]).every((a) => ['127.0.0.1', '::1'].includes(a.address))).toBe(true);
    const one = await lookup(true, 'localhost', false);
    expect(one.err).toBeNull();
    expect(['127.0.0.1', '::1']).toContain((one.result as { address: string }).address);
  });
});
