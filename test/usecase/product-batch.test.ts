import { describe, expect, it } from 'vitest';
import {
  accepted,
  getProductByExternalId,
  putProduct,
  productWrite,
  raisedEvents,
  storeWithCaller,
  unique,
  upsertProductBatch,
} from '#fixtures/usecase.ts';

/**
 * The product batch (shared/app/product-batch.ts) called in-process: each item is the single PUT or
 * PATCH of its external id, with its own outcome, and only the items that changed something raise
 * an event. The answer's shape (status per item, the mapped product) is
 * test/integration/catalog-batch-result.test.ts's.
 */
const writer = () => storeWithCaller(['catalog:read', 'catalog:write']);
const item = (external_id: string, price: number) => ({ external_id, name: `Product ${external_id}`, price });
const summary = (outcomes: Awaited<ReturnType<typeof upsertProductBatch>>) =>
  outcomes.map((o) => (o.ok ? [o.external_id, o.result] : [o.external_id, o.error.code, o.error.field]));

describe('upsertProductBatch', () => {
  it('answers created, updated and unchanged item by item, and only the changes raise events', async () => {
    const { caller } = await writer();
    expect(summary(await upsertProductBatch(caller, [item('keep', 100), item('change', 100)], 'replace'))).toEqual([
      ['keep', 'created'],
      ['change', 'created'],
    ]);
    const items = [item('keep', 100), item('change', 250), item('new', 100), item('bad', -1)];
    const mixed = await upsertProductBatch(caller, items, 'replace');
    expect(summary(mixed)).toEqual([
      ['keep', 'unchanged'],
      ['change', 'updated'],
      ['new', 'created'],
      ['bad', 'validation_failed', 'price'],
    ]);
    // The same batch again (a client retrying after a lost answer) changes nothing at all.
    const again = await upsertProductBatch(caller, items, 'replace');
    expect(summary(again)).toEqual([
      ['keep', 'unchanged'],
      ['change', 'unchanged'],
      ['new', 'unchanged'],
      ['bad', 'validation_failed', 'price'],
    ]);
    expect(again.slice(0, 3).map((o) => o.ok && o.product)).toEqual(mixed.slice(0, 3).map((o) => o.ok && o.product));
    // Two changes in the second batch, none in the third: four events in all (one transaction's
    // events share their time, so they are compared as a set).
    const id = (xid: string) => idOf(mixed, xid);
    const events = (await raisedEvents(caller.storeId)).map((e) => `${e.event_type} ${e.payload.data.product.id}`);
    expect(events.sort()).toEqual(
      [
        `product.created ${id('keep')}`,
        `product.created ${id('change')}`,
        `product.updated ${id('change')}`,
        `product.created ${id('new')}`,
      ].sort(),
    );
  });

  it('answers a patch batch item by item: updated, unchanged, and an unknown external id not found', async () => {
    const { caller } = await writer();
    await upsertProductBatch(caller, [item('p1', 100), item('p2', 100)], 'replace');
    const patched = await upsertProductBatch(
      caller,
      [
        { external_id: 'p1', price: 100 },
        { external_id: 'p2', price: 300 },
        { external_id: 'p3', price: 100 },
        { external_id: 'p1x', name: '' },
      ],
      'patch',
    );
    expect(summary(patched)).toEqual([
      ['p1', 'unchanged'],
      ['p2', 'updated'],
      ['p3', 'not_found', null],
      ['p1x', 'validation_failed', 'name'],
    ]);
    expect((await getProductByExternalId(caller, 'p2')).offers[0]?.price).toBe(300);
  });

  it('inserts more new products than one group holds with consecutive ids, beside replaces of existing ones', async () => {
    const { caller } = await writer();
    const existing = accepted(await putProduct(caller, 'old', productWrite({ name: 'Old', price: 1 })));
    const fresh = Array.from({ length: 45 }, (_, i) => item(unique(`n${i}`), i + 1));
    const outcomes = await upsertProductBatch(caller, [item('old', 2), ...fresh], 'replace');
    expect(outcomes[0]).toMatchObject({ ok: true, result: 'updated' });
    const created = outcomes.slice(1);
    expect(created.every((o) => o.ok && o.result === 'created')).toBe(true);
    const ids = created.map((o) => (o.ok ? o.product.id : 0));
    const first = 'product' in existing ? existing.product.id + 1 : 0;
    expect(ids).toEqual(Array.from({ length: 45 }, (_, i) => first + i));
    expect(await raisedEvents(caller.storeId, 'product.created')).toHaveLength(46);
  });
});

function idOf(outcomes: Awaited<ReturnType<typeof upsertProductBatch>>, externalId: string): number | undefined {
  const found = outcomes.find((o) => o.external_id === externalId);
  return found?.ok ? found.product.id : undefined;
}
