import { describe, expect, it } from 'vitest';
import {
  deduplicationId,
  eventBridgeEntrySize,
  familyOf,
  messageAttributes,
  messageGroupId,
  SQS_MAX_MESSAGE_BYTES,
  sqsMessageSize,
  thinBody,
} from '#domain/webhook/destination.ts';
import { eventBody } from '#domain/webhook/delivery.ts';
import { receives } from '#domain/webhook/event-subscription.ts';
import { trusts } from '#emulation/local/integrator-aws.ts';

describe('an event on its way to a queue or a bus (shared/domain/webhook/destination.ts)', () => {
  it('groups a FIFO queue by store and family, a ping apart', () => {
    expect(messageGroupId('acme', 'order.paid')).toBe('acme:orders');
    expect(messageGroupId('acme', 'product.updated')).toBe('acme:catalog');
    expect(messageGroupId('acme', 'tag.upserted')).toBe('acme:catalog');
    expect(messageGroupId('acme', 'page.published')).toBe('acme:content');
    expect(messageGroupId('acme', 'webhook.ping')).toBe('acme:ping');
    expect(familyOf('order.status_changed')).toBe('orders');
  });

  it('deduplicates a retry by the event id and lets a redelivery through', () => {
    expect(deduplicationId('evt_1', 0)).toBe('evt_1');
    expect(deduplicationId('evt_1', 2)).toBe('evt_1-r2');
  });

  it('counts a message as SQS does (body and attributes) and an entry as EventBridge does', () => {
    const attributes = messageAttributes('evt_1', 'order.paid', 42);
    expect(attributes).toEqual({
      event_id: { DataType: 'String', StringValue: 'evt_1' },
      event_type: { DataType: 'String', StringValue: 'order.paid' },
      sequence: { DataType: 'Number', StringValue: '42' },
    });
    // 'é' is two bytes; attributes: (8+6+5) + (10+6+10) + (8+6+2).
    expect(sqsMessageSize('é', attributes)).toBe(2 + 19 + 26 + 16);
    expect(eventBridgeEntrySize({ Source: 'ab', DetailType: 'c', Detail: '{}', Resources: ['r1'] })).toBe(7);
    expect(eventBridgeEntrySize({ Time: new Date(), Source: 'ab', DetailType: 'c', Detail: '{}' })).toBe(19);
  });

  it('turns an event over the limit into a thin event that says where to read it', () => {
    const body = eventBody({
      id: 'evt_1',
      sequence: 42,
      type: 'product.updated',
      timestamp: '2026-12-01T00:00:00.000Z',
      origin: { kind: 'admin' },
      changed_fields: ['description'],
      data: { product: { id: 1, description: 'x'.repeat(SQS_MAX_MESSAGE_BYTES) } },
    });
    const thin = thinBody(body, SQS_MAX_MESSAGE_BYTES, 'an SQS message');
    expect(thin).toBe(
      `{"id":"evt_1","sequence":42,"type":"product.updated","timestamp":"2026-12-01T00:00:00.000Z","origin":{"kind":"admin"},"changed_fields":["description"],"data":null,"thin":{"fetch":"GET /events?cursor=41&limit=1","reason":"the event is ${Buffer.byteLength(body)} bytes, over the 262144 bytes of an SQS message"}}`,
    );
    expect(sqsMessageSize(thin, messageAttributes('evt_1', 'product.updated', 42))).toBeLessThan(1024);
  });

  it('receives what the fan-out would send the key: its families, its types and fields, not its own with exclude_own', () => {
    const key = { id: 4, abilities: ['catalog:read'], events: ['product.updated:price'], exclude_own: true };
    const event = { event_type: 'product.updated', changed_fields: ['price'], origin: { kind: 'admin' as const } };
    expect(receives(key, event)).toBe(true);
    expect(receives(key, { ...event, changed_fields: ['name'] })).toBe(false);
    expect(receives(key, { ...event, origin: { kind: 'key', key_id: 4 } })).toBe(false);
    expect(receives({ ...key, exclude_own: false }, { ...event, origin: { kind: 'key', key_id: 4 } })).toBe(true);
    expect(receives({ ...key, abilities: ['orders:read'] }, event)).toBe(false);
  });
});

describe('the local STS stand-in’s trust check (emulation/local/integrator-aws.ts)', () => {
  const policy = (condition?: unknown) => ({
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: 'x' },
        Action: 'sts:AssumeRole',
        ...(condition ? { Condition: condition } : {}),
      },
    ],
  });
  it('admits the external id the policy names and refuses any other, or none', () => {
    const p = policy({ StringEquals: { 'sts:ExternalId': 'sie_a' } });
    expect(trusts(p, 'sie_a')).toBe(true);
    expect(trusts(p, 'sie_b')).toBe(false);
    expect(trusts(p, undefined)).toBe(false);
    expect(trusts(policy({ StringEquals: { 'sts:ExternalId': ['sie_a', 'sie_b'] } }), 'sie_b')).toBe(true);
    expect(trusts(policy(), undefined)).toBe(true);
    expect(trusts({ Statement: [{ Effect: 'Deny', Action: 'sts:AssumeRole' }] }, undefined)).toBe(false);
    expect(trusts({ Statement: { Effect: 'Allow', Action: ['s3:GetObject'] } }, undefined)).toBe(false);
  });
});
