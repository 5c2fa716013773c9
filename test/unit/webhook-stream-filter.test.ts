import { describe, expect, it } from 'vitest';
import { isOutboxInsert, OUTBOX_STREAM_FILTER } from '#db/event/outbox-stream-filter.ts';
import { matchesFilter } from '#db/core/stream-filter.ts';

const record = (eventName: string, type: unknown) => ({
  eventName,
  eventSource: 'aws:dynamodb',
  dynamodb: {
    Keys: { pk: { S: 'STORE#s' }, sk: { S: 'EVENT#e' } },
    NewImage: type === undefined ? { pk: { S: 'x' } } : { pk: { S: 'x' }, type },
  },
});

describe('the outbox stream filter (shared by the CDK mapping and the local poller)', () => {
  it('is the Lambda event-filter pattern for outbox INSERTs', () => {
    expect(JSON.parse(JSON.stringify(OUTBOX_STREAM_FILTER))).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { type: { S: ['outbox'] } } },
    });
  });

  it('passes inserted outbox items only', () => {
    expect(isOutboxInsert(record('INSERT', { S: 'outbox' }))).toBe(true);
    expect(isOutboxInsert(record('MODIFY', { S: 'outbox' }))).toBe(false);
    expect(isOutboxInsert(record('REMOVE', { S: 'outbox' }))).toBe(false);
    expect(isOutboxInsert(record('INSERT', { S: 'order' }))).toBe(false);
    expect(isOutboxInsert(record('INSERT', { S: 'OUTBOX' }))).toBe(false);
    expect(isOutboxInsert(record('INSERT', { N: 'outbox' }))).toBe(false);
    expect(isOutboxInsert(record('INSERT', undefined))).toBe(false);
    expect(isOutboxInsert({ eventName: 'INSERT' })).toBe(false);
    expect(isOutboxInsert(null)).toBe(false);
  });

  it('passes every order event kind, since all share the outbox type (one filter, one path)', async () => {
    const { marshall } = await import('@aws-sdk/util-dynamodb');
    const { ORDER_EVENT_TYPES } = await import('#domain/order/events.ts');
    for (const eventType of ORDER_EVENT_TYPES) {
      const image = marshall({
        pk: 'STORE#s',
        sk: 'EVENT#e',
        type: 'outbox',
        event_type: eventType,
        payload: { type: eventType },
      });
      expect(isOutboxInsert({ eventName: 'INSERT', dynamodb: { NewImage: image } }), eventType).toBe(true);
    }
  });

  it('matches like Lambda: any listed value, unnamed fields ignored', () => {
    const pattern = { eventName: ['INSERT', 'MODIFY'], dynamodb: { NewImage: { state: { S: ['a', 'b'] } } } };
    expect(
      matchesFilter(pattern, {
        eventName: 'MODIFY',
        extra: 1,
        dynamodb: { NewImage: { state: { S: 'b' }, other: { S: 'z' } } },
      }),
    ).toBe(true);
    expect(matchesFilter(pattern, { eventName: 'REMOVE', dynamodb: { NewImage: { state: { S: 'b' } } } })).toBe(false);
    expect(matchesFilter(pattern, { eventName: 'INSERT', dynamodb: { NewImage: { state: { S: 'c' } } } })).toBe(false);
  });

  it('refuses rule kinds it does not implement instead of guessing', () => {
    expect(() => matchesFilter({ eventName: [{ prefix: 'IN' }] as never }, { eventName: 'INSERT' })).toThrow(
      /not an exact match/,
    );
  });
});
