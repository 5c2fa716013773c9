import { nextUpdatedAt } from '#domain/time.ts';
import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import {
  applyProductChange,
  needsNewOffer,
  newProductDraft,
  numbered,
  offerCount,
  ProductPatchBody,
  ProductPutBody,
} from '#domain/product/product-write.ts';
import { isReservedTagValue, tagComparisonForm } from '#domain/product/taxonomy.ts';
import { externalIdFromPath, isExternalId } from '#domain/validation.ts';
import type { Product } from '#domain/product/product.ts';
import { productEvent } from '#domain/event/product.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:05.000Z';

const product = (over: Partial<Product> = {}): Product => ({
  id: 7,
  store_id: 's',
  external_id: 'x',
  owner_key_id: 1,
  name: 'Chair',
  description: 'd',
  status: 'active',
  image_url: null,
  category_ids: [3],
  category_external_ids: ['c'],
  tag_external_ids: ['t'],
  offers: [
    {
      id: 10,
      sku: 'A',
      price: 100,
      quantity: 1,
      properties: [{ name: 'size', value: 'S' }],
      weight: 2,
      length: null,
      height: null,
      width: null,
    },
    {
      id: 11,
      sku: 'B',
      price: 200,
      quantity: 2,
      properties: [],
      weight: null,
      length: null,
      height: null,
      width: null,
    },
  ],
  created_at: T0,
  updated_at: T0,
  ...over,
});

describe('applyProductChange', () => {
  it('returns null when the change leaves every field as it is', () => {
    expect(applyProductChange(product(), {}, T1)).toBeNull();
    expect(
      applyProductChange(
        product(),
        { name: 'Chair', price: 100, sku: 'A', category_external_ids: ['c'], category_ids: [3] },
        T1,
      ),
    ).toBeNull();
  });

  it('changes the first variant’s price, quantity and SKU only, keeping its other attributes and the other variants', () => {
    const next = applyProductChange(product(), { price: 150, sku: null }, T1)!;
    expect(next.offers).toEqual([
      {
        id: 10,
        sku: null,
        price: 150,
        quantity: 1,
        properties: [{ name: 'size', value: 'S' }],
        weight: 2,
        length: null,
        height: null,
        width: null,
      },
      product().offers[1],
    ]);
    expect(next).toMatchObject({ name: 'Chair', created_at: T0, updated_at: T1 });
  });

  it('replaces the category links together with their ids', () => {
    const next = applyProductChange(product(), { category_external_ids: ['d', 'e'], category_ids: [8, 9] }, T1)!;
    expect(next).toMatchObject({ category_external_ids: ['d', 'e'], category_ids: [8, 9], tag_external_ids: ['t'] });
  });

  it('moves updated_at strictly forward even when the clock has not', () => {
    const next = applyProductChange(product({ updated_at: T1 }), { name: 'Stool' }, T0)!;
    expect(next.updated_at).toBe('2026-01-01T00:00:05.001Z');
  });

  it('creates a first variant for a product without one, with the id it is given', () => {
    const bare = product({ offers: [] });
    expect(needsNewOffer(bare, { price: 5 })).toBe(true);
    expect(needsNewOffer(bare, { name: 'x' })).toBe(false);
    expect(() => applyProductChange(bare, { price: 5 }, T1)).toThrow();
    expect(applyProductChange(bare, { price: 5 }, T1, 99)!.offers).toEqual([
      {
        id: 99,
        sku: null,
        price: 5,
        quantity: 0,
        properties: [],
        weight: null,
        length: null,
        height: null,
        width: null,
      },
    ]);
  });
});

describe('nextUpdatedAt', () => {
  it.each([
    [T0, T1, T1],
    [T1, T0, '2026-01-01T00:00:05.001Z'],
    [T1, T1, '2026-01-01T00:00:05.001Z'],
    ['garbage', T1, T1],
  ])('after %s at %s is %s', (previous, now, expected) => {
    expect(nextUpdatedAt(previous, Date.parse(now))).toBe(expected);
  });
});

describe('write schemas', () => {
  it('fills the PUT defaults and leaves PATCH fields absent', () => {
    const put = v.parse(ProductPutBody, { name: 'N', price: 1 });
    expect(put).toEqual({
      name: 'N',
      price: 1,
      quantity: 0,
      sku: null,
      description: '',
      status: 'active',
      image_url: null,
      category_external_ids: [],
      tag_external_ids: [],
    });
    expect(v.parse(ProductPatchBody, { price: 2 })).toEqual({ price: 2 });
    expect(Object.keys(v.parse(ProductPatchBody, {}))).toEqual([]);
  });

  it('stores the normalized image URL and the empty SKU as null', () => {
    const put = v.parse(ProductPutBody, {
      name: 'N',
      price: 1,
      image_url: 'https://CDN.example.com:443/a.png',
      sku: '',
    });
    expect(put).toMatchObject({ image_url: 'https://cdn.example.com/a.png', sku: null });
  });

  it('reports a duplicate at its second position', () => {
    const r = v.safeParse(ProductPatchBody, { tag_external_ids: ['a', 'b', 'a'] });
    expect(r.success).toBe(false);
    expect(r.issues?.[0]?.path?.map((p) => p.key)).toEqual(['tag_external_ids', 2]);
  });

  it('builds the draft of a first PUT with one variant', () => {
    const put = v.parse(ProductPutBody, { name: 'N', price: 1, sku: 'S' });
    const draft = newProductDraft({ ...put, category_ids: [] }, { storeId: 's', keyId: 2, externalId: 'x' }, T0);
    expect(draft).toMatchObject({ store_id: 's', owner_key_id: 2, external_id: 'x', created_at: T0, updated_at: T0 });
    expect(draft.offers).toEqual([
      { sku: 'S', price: 1, quantity: 0, properties: [], weight: null, length: null, height: null, width: null },
    ]);
  });

  it('numbers drafts in the use case: consecutive product ids, offer ids across all their variants', () => {
    const put = v.parse(ProductPutBody, { name: 'N', price: 1 });
    const one = newProductDraft({ ...put, category_ids: [] }, { storeId: 's', keyId: 2, externalId: 'a' }, T0);
    const two = { ...one, external_id: 'b', offers: [...one.offers, ...one.offers] };
    const products = numbered([one, two], 41, 7);
    expect(products.map((p) => p.id)).toEqual([41, 42]);
    expect(products.map((p) => p.offers.map((o) => o.id))).toEqual([[7], [8, 9]]);
    expect(offerCount([one, two])).toBe(3);
  });

  it('builds the event a change raises from the decided product alone (the use case hands it to the commit)', () => {
    const put = v.parse(ProductPutBody, { name: 'N', price: 1 });
    const draft = newProductDraft({ ...put, category_ids: [] }, { storeId: 's', keyId: 2, externalId: 'a' }, T0);
    const [created] = numbered([draft], 5, 1);
    const event = productEvent('product.created', created!);
    expect(event).toMatchObject({
      event_type: 'product.created',
      store_id: 's',
      created_at: T0,
      origin: { kind: 'key', key_id: 2 },
      owner_key_id: 2,
      external_id: 'a',
    });
    expect(event.payload.data).toMatchObject({ product: { id: 5, name: 'N' } });
    const renamed = productEvent(
      'product.updated',
      { ...created!, name: 'M', owner_key_id: null },
      undefined,
      created!,
    );
    expect(renamed.origin).toEqual({ kind: 'admin' });
    expect(renamed.payload.changed_fields).toEqual(['name']);
  });
});

describe('reserved tag values', () => {
  it.each([
    'paid',
    ' PAID ',
    'Pending',
    'processing',
    'shipped',
    'delivered',
    'cancelled',
    'returned',
    'active',
    'DRAFT',
    'archived',
    'published',
    'Unpublished',
    'ｐａｉｄ',
    'pa\u200bid',
    '\u00a0paid\u2003',
    '\ufeffpaid',
  ])('%j is reserved', (value) => expect(isReservedTagValue(value)).toBe(true));
  it.each(['unpaid', 'paid in full', 'canceled', 'archive', 'p aid', 'new'])('%j is not', (value) =>
    expect(isReservedTagValue(value)).toBe(false),
  );
  it('compares in one normal form', () => expect(tagComparisonForm('  ＳＨＩＰＰＥＤ\t')).toBe('shipped'));
});

describe('external ids', () => {
  it.each(['a', 'A-Z_0.9:x', 'x'.repeat(128)])('%s is valid', (id) => expect(isExternalId(id)).toBe(true));
  it.each(['', 'x'.repeat(129), 'a b', 'a/b', 'ü', 'a%3Ab', 'a#b'])('%j is not', (id) =>
    expect(isExternalId(id)).toBe(false),
  );
  it('decodes a percent-encoded path parameter once', () => {
    expect(externalIdFromPath('erp%3A42')).toBe('erp:42');
    expect(externalIdFromPath('erp:42')).toBe('erp:42');
    expect(externalIdFromPath('%E0%A4%A')).toBeUndefined();
    expect(externalIdFromPath('a%2Fb')).toBeUndefined();
    expect(externalIdFromPath(undefined)).toBeUndefined();
  });
});
