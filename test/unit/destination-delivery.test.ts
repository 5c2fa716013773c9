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
import { answerPutEvents, type ReceivedEvent } from '#emulation/local/integrator-events.ts';

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

describe('the local EventBridge stand-in’s PutEvents (emulation/local/integrator-events.ts)', () => {
  const session = { role: 'arn:aws:iam::111122223333:role/store-events-crm', expiresMs: Date.now() + 60_000 };
  const bus = 'arn:aws:events:us-east-1:111122223333:event-bus/store-events';
  const entry = (e: Record<string, unknown> = {}) => ({
    EventBusName: bus,
    Source: 'store-integration-api',
    DetailType: 'order.paid',
    Detail: '{"id":"evt_1"}',
    ...e,
  });
  /** `null`: no session of the stand-in signed the request. */
  const put = (entries: unknown[], s: typeof session | null = session) => {
    const buses = new Map<string, ReceivedEvent[]>([[bus, []]]);
    const answer = answerPutEvents(
      JSON.stringify({ Entries: entries }),
      s ?? undefined,
      (arn) => buses.get(arn),
      'us-east-1',
    );
    return { answer, received: buses.get(bus)! };
  };

  it('keeps an entry on its bus and answers its id', () => {
    const { answer, received } = put([entry()]);
    expect(answer).toMatchObject({
      status: 200,
      body: { FailedEntryCount: 0, Entries: [{ EventId: expect.any(String) }] },
    });
    expect(received).toMatchObject([
      { bus, source: 'store-integration-api', detail_type: 'order.paid', role: session.role },
    ]);
  });

  it('refuses the request without a live session, with no entry or more than 10, or over 256 KiB in all', () => {
    expect(put([entry()], null).answer).toMatchObject({ status: 400, errorType: 'UnrecognizedClientException' });
    expect(put([entry()], { ...session, expiresMs: Date.now() - 1 }).answer).toMatchObject({
      errorType: 'ExpiredTokenException',
    });
    expect(put([]).answer).toMatchObject({ status: 400, errorType: 'ValidationException' });
    expect(put(Array.from({ length: 11 }, () => entry())).answer).toMatchObject({ errorType: 'ValidationException' });
    expect(put(Array.from({ length: 10 }, () => entry())).answer.status).toBe(200);
    const half = `{"x":"${'a'.repeat(140_000)}"}`;
    expect(put([entry({ Detail: half }), entry({ Detail: half })]).answer).toMatchObject({
      status: 400,
      errorType: 'ValidationException',
    });
    expect(put([entry({ Detail: half })]).received).toHaveLength(1);
  });

  it('fails an entry, not the request, that lacks a field, has a Detail that is no JSON object, an aws. source or no bus', () => {
    const { answer, received } = put([
      entry({ Source: undefined }),
      entry({ DetailType: '' }),
      entry({ Detail: 'not json' }),
      entry({ Detail: '[1,2]' }),
      entry({ Source: 'aws.s3' }),
      entry({ EventBusName: 'arn:aws:events:us-east-1:111122223333:event-bus/none' }),
      entry(),
    ]);
    const codes = (answer.body as { Entries: { ErrorCode?: string }[] }).Entries.map((e) => e.ErrorCode ?? 'ok');
    expect(codes).toEqual([
      'InvalidArgument',
      'InvalidArgument',
      'MalformedDetail',
      'MalformedDetail',
      'NotAuthorizedForSourceException',
      'ResourceNotFoundException',
      'ok',
    ]);
    expect((answer.body as { FailedEntryCount: number }).FailedEntryCount).toBe(6);
    expect(received).toHaveLength(1);
  });
});
