import { describe, expect, it } from 'vitest';
import {
  assumableRoleArnPattern,
  destinationView,
  generateExternalId,
  isOrdered,
  parseBusArn,
  parseQueueUrl,
  parseRoleArn,
  regionOf,
  targetName,
} from '#domain/key/destination.ts';
import { keyItem, toKeyRecord } from '#db/key/item.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';

describe('a key’s SQS or EventBridge destination (shared/domain/key/destination.ts)', () => {
  it('takes an SQS queue URL as AWS gives it, with the ARN its policy names, FIFO by its name', () => {
    expect(parseQueueUrl('https://sqs.eu-west-1.amazonaws.com/123456789012/store-events.fifo', false)).toEqual({
      ok: true,
      value: {
        queue_url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/store-events.fifo',
        queue_arn: 'arn:aws:sqs:eu-west-1:123456789012:store-events.fifo',
        fifo: true,
      },
    });
    expect(parseQueueUrl('https://us-gov-west-1.queue.amazonaws.com/123456789012/crm', false)).toMatchObject({
      ok: true,
      value: { queue_arn: 'arn:aws:sqs:us-gov-west-1:123456789012:crm', fifo: false },
    });
  });

  it('refuses what is no SQS queue URL of AWS: another host, a path, a bad name, http, the emulator outside the local stack', () => {
    for (const url of [
      'https://crm.example.com/123456789012/q',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/q/extra',
      'https://sqs.eu-west-1.amazonaws.com/12345/q',
      'https://sqs.eu-west-1.amazonaws.com/123456789012/bad name',
      `https://sqs.eu-west-1.amazonaws.com/123456789012/${'q'.repeat(81)}`,
      'http://sqs.eu-west-1.amazonaws.com/123456789012/q',
      'https://sqs.eu-west-1.amazonaws.com.evil.example/123456789012/q',
      'http://sqs.us-east-1.127.0.0.1:4566/000000000000/q',
    ])
      expect(parseQueueUrl(url, false), url).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^sqs_queue_url /),
      });
  });

  it('takes the local SQS emulator’s queue URL only where the local stack allows loopback', () => {
    expect(parseQueueUrl('http://sqs.us-east-1.127.0.0.1:4566/000000000000/q.fifo', true)).toMatchObject({
      ok: true,
      value: { queue_arn: 'arn:aws:sqs:us-east-1:000000000000:q.fifo', fifo: true },
    });
    expect(parseQueueUrl('http://sqs.us-east-1.10.0.0.1:4566/000000000000/q', true).ok).toBe(false);
  });

  it('takes a bus ARN (the default bus too) and refuses other ARNs', () => {
    expect(parseBusArn('arn:aws:events:eu-west-1:123456789012:event-bus/store-events').ok).toBe(true);
    expect(parseBusArn('arn:aws:events:eu-west-1:123456789012:event-bus/default').ok).toBe(true);
    for (const arn of [
      'arn:aws:events:eu-west-1:123456789012:rule/x',
      'arn:aws:sqs:eu-west-1:123456789012:q',
      'arn:aws:events:eu-west-1:123:event-bus/x',
      'arn:aws:events:eu-west-1:123456789012:event-bus/',
    ])
      expect(parseBusArn(arn).ok, arn).toBe(false);
  });

  it('takes only roles named store-events-… without a path: the signer may assume no other', () => {
    expect(parseRoleArn('arn:aws:iam::123456789012:role/store-events-crm').ok).toBe(true);
    for (const arn of [
      'arn:aws:iam::123456789012:role/crm',
      'arn:aws:iam::123456789012:role/x/store-events-crm',
      'arn:aws:iam::123456789012:user/store-events-crm',
      'arn:aws:iam::123456789012:role/store-events-',
      `arn:aws:iam::123456789012:role/store-events-${'a'.repeat(52)}`,
      'arn:aws:iam::123456789012:role/store-events-crm ',
    ])
      expect(parseRoleArn(arn).ok, arn).toBe(false);
    expect(assumableRoleArnPattern('aws')).toBe('arn:aws:iam::*:role/store-events-*');
  });

  it('makes a fresh 128-bit external id each time', () => {
    const ids = new Set(Array.from({ length: 100 }, generateExternalId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^sie_[0-9a-f]{32}$/);
  });

  it('names a destination’s region, target and view, and orders FIFO queues only', () => {
    const sqs = {
      kind: 'sqs' as const,
      queue_url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q.fifo',
      queue_arn: 'arn:aws:sqs:eu-west-1:123456789012:q.fifo',
      role_arn: 'arn:aws:iam::123456789012:role/store-events-crm',
      fifo: true,
    };
    const bus = {
      kind: 'eventbridge' as const,
      bus_arn: 'arn:aws:events:us-east-2:123456789012:event-bus/b',
      role_arn: 'arn:aws:iam::123456789012:role/store-events-crm',
    };
    expect(regionOf(sqs)).toBe('eu-west-1');
    expect(regionOf(bus)).toBe('us-east-2');
    expect(targetName(sqs)).toBe('sqs:q.fifo');
    expect(targetName(bus)).toBe('eventbridge:event-bus/b');
    expect(targetName({ kind: 'webhook', url: 'https://crm.example.com/hooks?secret=1' })).toBe('crm.example.com');
    expect(isOrdered(sqs)).toBe(true);
    expect(isOrdered({ ...sqs, fifo: false })).toBe(false);
    expect(isOrdered(bus)).toBe(false);
    expect(destinationView(sqs)).toEqual({ kind: 'sqs', queue_url: sqs.queue_url, role_arn: sqs.role_arn, fifo: true });
  });
});

describe('a destination as the key item stores it (shared/db/key/item.ts)', () => {
  const record = (destination: KeyRecord['destination'], orderedFrom: number | null = null): KeyRecord => ({
    id: 7,
    store_id: 'acme',
    name: 'crm',
    abilities: ['orders:read'],
    status: 'active',
    webhook_url: destination?.kind === 'webhook' ? destination.url : null,
    destination,
    aws_external_id: 'sie_0123456789abcdef0123456789abcdef',
    events: ['order.paid'],
    exclude_own: false,
    mcp: 'full',
    writes_per_hour: null,
    status_changes_per_hour: null,
    created_at: '2026-12-01T00:00:00.000Z',
    revoked_at: null,
    last_used_at: null,
    token_hash: 'h',
    ordered_from: orderedFrom,
    webhook_secret: 's',
    previous_webhook_secret: null,
    previous_webhook_secret_expires_at: null,
  });
  const sqs = {
    kind: 'sqs' as const,
    queue_url: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q.fifo',
    queue_arn: 'arn:aws:sqs:eu-west-1:123456789012:q.fifo',
    role_arn: 'arn:aws:iam::123456789012:role/store-events-crm',
    fifo: true,
  };

  it('reads back what it wrote, for every kind and none', () => {
    for (const d of [
      null,
      { kind: 'webhook' as const, url: 'https://crm.example.com/hooks' },
      sqs,
      {
        kind: 'eventbridge' as const,
        bus_arn: 'arn:aws:events:eu-west-1:123456789012:event-bus/b',
        role_arn: sqs.role_arn,
      },
    ]) {
      const { last_used_at: _l, ...stored } = record(d, d?.kind === 'sqs' ? 41 : null);
      expect(toKeyRecord(keyItem(record(d, d?.kind === 'sqs' ? 41 : null)))).toEqual({ ...stored, last_used_at: null });
    }
  });

  it('keeps the kind and target in webhook_url, the attribute gsi1 projects, so the fan-out sees them', () => {
    const item = keyItem(record(sqs, 41));
    expect(item.webhook_url).toBe(sqs.queue_arn);
    // What the index hands the fan-out: the projected attributes only.
    const projected = { id: item.id, store_id: item.store_id, status: item.status, webhook_url: item.webhook_url };
    expect(toKeyRecord(projected).destination).toEqual({ ...sqs, queue_url: '', role_arn: '' });
    expect(toKeyRecord(projected).webhook_url).toBeNull();
    expect(keyItem(record(null)).webhook_url).toBeNull();
    expect(toKeyRecord({ ...projected, webhook_url: null }).destination).toBeNull();
  });
});
