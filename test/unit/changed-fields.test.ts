import { describe, expect, it } from 'vitest';
import { changedFields } from '#domain/event/event.ts';
import { formatTypeFilter, parseTypeFilters, passes } from '#domain/event/changed-fields.ts';
import { eventView, type EventPayload } from '#domain/event/event.ts';
import { storedEvents, subscribes } from '#domain/webhook/event-subscription.ts';

const filters = (list: string) => {
  const parsed = parseTypeFilters(list);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.filters;
};
const refusal = (list: string) => {
  const parsed = parseTypeFilters(list);
  return parsed.ok ? undefined : parsed.message;
};

describe('changed_fields', () => {
  it('names the fields whose values differ, in the listed order, arrays by content', () => {
    const before = { name: 'A', price: 1, tag_external_ids: ['x'], sku: null };
    const after = { name: 'A', price: 2, tag_external_ids: ['x', 'y'], sku: null };
    expect(changedFields('product.updated', before, after)).toEqual(['price', 'tag_external_ids']);
    expect(changedFields('product.updated', before, before)).toEqual([]);
  });

  it('names every field of a new record', () => {
    expect(changedFields('category.upserted', undefined, { name: 'Chairs' })).toEqual(['name']);
  });
});

describe('types filters', () => {
  it('keeps the plain comma-separated list as it was', () => {
    expect(filters('order.paid, product.updated')).toEqual([
      { type: 'order.paid', fields: null },
      { type: 'product.updated', fields: null },
    ]);
  });

  it('reads field names after a colon until the next type', () => {
    expect(filters('product.updated:quantity,price,order.paid,page.published:body')).toEqual([
      { type: 'order.paid', fields: null },
      { type: 'product.updated', fields: ['price', 'quantity'] },
      { type: 'page.published', fields: ['body'] },
    ]);
  });

  it('merges repeated types, a type without fields taking every event of it', () => {
    expect(filters('product.updated:price,product.updated:name')).toEqual([
      { type: 'product.updated', fields: ['name', 'price'] },
    ]);
    expect(filters('product.updated,product.updated:price,name')).toEqual([{ type: 'product.updated', fields: null }]);
  });

  it.each([
    ['order.shipped', /order\.shipped is no event type/],
    ['product.updated:colour', /product\.updated has no field colour \(its fields: name, sku/],
    ['product.updated:', /has no field \(empty\)/],
    ['price,product.updated', /price is no event type/],
    ['order.paid,price', /price is no event type/],
    ['order.paid:status', /order\.paid carries no changed_fields/],
    ['product.updated:price,name:x', /name:x is no event type/],
    [' , ', /name at least one event type/],
  ])('refuses %j', (list, message) => {
    expect(refusal(list)).toMatch(message);
  });

  it('passes an event that changed any of the named fields, and one of an unfiltered type', () => {
    const f = filters('product.updated:price,name,order.paid');
    expect(passes(f, 'product.updated', ['quantity', 'price'])).toBe(true);
    expect(passes(f, 'product.updated', ['quantity'])).toBe(false);
    expect(passes(f, 'product.updated', null)).toBe(false);
    expect(passes(f, 'order.paid', undefined)).toBe(true);
    expect(passes(f, 'order.created', undefined)).toBe(false);
  });

  it('stores one entry per type that parses back to the same subscription', () => {
    const entries = filters('product.updated:price,name,order.paid').map(formatTypeFilter);
    expect(entries).toEqual(['order.paid', 'product.updated:name,price']);
    expect(storedEvents(entries)).toEqual(entries);
    expect(storedEvents(['order.paid', 'nonsense', 'tag.upserted:value'])).toEqual([
      'order.paid',
      'tag.upserted:value',
    ]);
    expect(subscribes(entries, 'product.updated', ['name'])).toBe(true);
    expect(subscribes(entries, 'product.updated', ['sku'])).toBe(false);
  });
});

describe('an event view', () => {
  const logged = (type: string, changed?: string[]) => ({
    event_id: 'evt_1',
    sequence: 3,
    payload: { type, timestamp: '2026-11-25T00:00:00.000Z', data: {}, ...(changed ? { changed_fields: changed } : {}) },
    origin: null,
    owner_key_id: null,
    external_id: null,
  });

  it('carries changed_fields beside type and data on the types that have them, null when not recorded', () => {
    expect(eventView(logged('product.updated', ['price']), 1).changed_fields).toEqual(['price']);
    expect(eventView(logged('tag.upserted'), 1).changed_fields).toBeNull();
    expect(
      'changed_fields' in eventView(logged('order.paid') as { payload: EventPayload } & ReturnType<typeof logged>, 1),
    ).toBe(false);
  });
});
