import { describe, expect, it } from 'vitest';
import {
  accepted,
  getProductByExternalId,
  newKey,
  outcome,
  patchProduct,
  productPatch,
  productWrite,
  putCategory,
  putProduct,
  putTag,
  raisedEvents,
  storeWithCaller,
  unique,
  type TestCaller,
} from '#fixtures/usecase.ts';
import { productChecksum } from '#domain/product/checksum.ts';

/**
 * The product writes (shared/app/product-writes.ts) called in-process: PUT's create, replace and
 * no-op, PATCH's merge, their If-Match / If-None-Match conditions decided on the state each round
 * commits from, and the events a write raises with its change. What the routes answer for each
 * outcome (status, ETag, body) is test/integration/catalog-products.test.ts's and
 * catalog-conditional.test.ts's.
 */
const writer = () => storeWithCaller(['catalog:read', 'catalog:write']);
const checksumOf = async (caller: TestCaller, externalId: string) =>
  productChecksum(await getProductByExternalId(caller, externalId));

describe('putProduct and patchProduct', () => {
  it('creates on the first PUT, replaces on a later one, writes nothing for the same body, and raises one event per change', async () => {
    const { caller } = await writer();
    const xid = unique('p');
    const created = accepted(await putProduct(caller, xid, productWrite({ name: 'Desk', price: 100, sku: 'D-1' })));
    expect(created).toMatchObject({ result: 'created', product: { external_id: xid, name: 'Desk' } });
    const same = accepted(await putProduct(caller, xid, productWrite({ name: 'Desk', price: 100, sku: 'D-1' })));
    expect(same).toMatchObject({ result: 'unchanged' });
    if (!('product' in created) || !('product' in same)) return;
    expect(same.product.updated_at).toBe(created.product.updated_at);

    const replaced = accepted(await putProduct(caller, xid, productWrite({ name: 'Desk', price: 150 })));
    expect(replaced).toMatchObject({ result: 'updated', product: { id: created.product.id } });
    if (!('product' in replaced)) return;
    // Every write field is replaced: the omitted sku is back to none; created_at stays.
    expect(replaced.product.offers[0]).toMatchObject({ sku: null, price: 150 });
    expect(replaced.product.created_at).toBe(created.product.created_at);

    const patched = accepted(await patchProduct(caller, xid, productPatch({ description: 'Oak' })));
    expect(patched).toMatchObject({ result: 'updated', product: { description: 'Oak', name: 'Desk' } });
    expect(accepted(await patchProduct(caller, xid, productPatch({})))).toMatchObject({ result: 'unchanged' });

    const events = await raisedEvents(caller.storeId);
    expect(events.map((e) => [e.event_type, e.payload.changed_fields])).toEqual([
      ['product.created', undefined],
      ['product.updated', ['sku', 'price']],
      ['product.updated', ['description']],
    ]);
  });

  it('answers a PATCH of an unknown external id and a reference that does not exist as refusals, writing nothing', async () => {
    const { caller } = await writer();
    // Returned, not thrown: a rejected promise fails these assertions.
    expect(await patchProduct(caller, unique('none'), productPatch({ price: 1 }))).toMatchObject({
      kind: 'refused',
      code: 'not_found',
    });
    await putCategory(caller, 'cat-a', 'Chairs');
    const write = productWrite({ name: 'Chair', price: 1, category_external_ids: ['cat-a', 'cat-b'] });
    expect(await putProduct(caller, unique('p'), write)).toMatchObject({
      kind: 'refused',
      code: 'unknown_reference',
      field: 'category_external_ids[1]',
    });
    await putTag(caller, 'tag-a', 'oak');
    const tagged = productWrite({
      name: 'Chair',
      price: 1,
      category_external_ids: ['cat-a'],
      tag_external_ids: ['tag-x'],
    });
    expect(await putProduct(caller, unique('p'), tagged)).toMatchObject({
      kind: 'refused',
      code: 'unknown_reference',
      field: 'tag_external_ids[0]',
    });
    expect(await raisedEvents(caller.storeId, 'product.created')).toEqual([]);
  });

  it("keeps each key's external ids its own: another key's PUT of the same id creates its own product, its PATCH finds none", async () => {
    const { caller } = await writer();
    const { caller: other } = await newKey(caller.storeId, ['catalog:write']);
    const xid = unique('p');
    const mine = accepted(await putProduct(caller, xid, productWrite({ name: 'Mine', price: 1 })));
    expect(await outcome(patchProduct(other, xid, productPatch({ price: 2 })))).toMatchObject({ code: 'not_found' });
    const theirs = accepted(await putProduct(other, xid, productWrite({ name: 'Theirs', price: 2 })));
    expect(theirs).toMatchObject({ result: 'created' });
    if (!('product' in mine) || !('product' in theirs)) return;
    expect(theirs.product.id).not.toBe(mine.product.id);
    expect((await getProductByExternalId(caller, xid)).name).toBe('Mine');
  });
});

describe('conditional product writes', () => {
  it('writes with the current checksum and refuses a stale one, writing nothing', async () => {
    const { caller } = await writer();
    const xid = unique('p');
    accepted(await putProduct(caller, xid, productWrite({ name: 'Desk', price: 100 })));
    const first = await checksumOf(caller, xid);
    expect(
      accepted(await putProduct(caller, xid, productWrite({ name: 'Desk', price: 150 }), { ifMatch: [first] })),
    ).toMatchObject({ result: 'updated' });
    const current = await checksumOf(caller, xid);
    expect(await putProduct(caller, xid, productWrite({ name: 'Desk', price: 999 }), { ifMatch: [first] })).toEqual({
      result: 'precondition_failed',
      header: 'If-Match',
    });
    expect(await patchProduct(caller, xid, productPatch({ price: 999 }), { ifMatch: [first] })).toEqual({
      result: 'precondition_failed',
      header: 'If-Match',
    });
    expect(await checksumOf(caller, xid)).toBe(current);
    // A list holding the current checksum matches, and `*` matches whatever exists.
    expect(
      accepted(await patchProduct(caller, xid, productPatch({ price: 160 }), { ifMatch: ['nope', current] })),
    ).toMatchObject({ result: 'updated' });
    expect(accepted(await patchProduct(caller, xid, productPatch({ price: 170 }), { ifMatch: '*' }))).toMatchObject({
      result: 'updated',
    });
    expect(await raisedEvents(caller.storeId, 'product.updated')).toHaveLength(3);
  });

  it('refuses If-Match on a product that does not exist: PUT creates nothing, PATCH is not found as without it', async () => {
    const { caller } = await writer();
    const xid = unique('p');
    expect(await putProduct(caller, xid, productWrite({ name: 'Lamp', price: 1 }), { ifMatch: '*' })).toEqual({
      result: 'precondition_failed',
      header: 'If-Match',
    });
    expect(await outcome(getProductByExternalId(caller, xid))).toMatchObject({ code: 'not_found' });
    expect(await outcome(patchProduct(caller, xid, productPatch({ price: 2 }), { ifMatch: ['x'] }))).toMatchObject({
      code: 'not_found',
    });
    expect(await raisedEvents(caller.storeId)).toEqual([]);
  });

  it('creates only with If-None-Match: *, and refuses it once the product exists', async () => {
    const { caller } = await writer();
    const xid = unique('p');
    const created = accepted(
      await putProduct(caller, xid, productWrite({ name: 'Stool', price: 10 }), { createOnly: true }),
    );
    expect(created).toMatchObject({ result: 'created' });
    expect(await putProduct(caller, xid, productWrite({ name: 'Stool', price: 20 }), { createOnly: true })).toEqual({
      result: 'precondition_failed',
      header: 'If-None-Match',
    });
    expect((await getProductByExternalId(caller, xid)).offers[0]?.price).toBe(10);
  });

  it('creates one product when 10 create-only PUTs race: one created, the rest refused on If-None-Match', async () => {
    const { caller } = await writer();
    const xid = unique('race');
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        putProduct(caller, xid, productWrite({ name: `Racer ${i}`, price: i }), { createOnly: true }),
      ),
    );
    const created = answers.filter((a) => 'result' in a && a.result === 'created');
    expect(created).toHaveLength(1);
    expect(answers.filter((a) => 'result' in a && a.result === 'precondition_failed')).toEqual(
      Array(9).fill({ result: 'precondition_failed', header: 'If-None-Match' }),
    );
    const winner = created[0];
    if (!winner || !('product' in winner)) return;
    expect(await getProductByExternalId(caller, xid)).toEqual(winner.product);
    expect(await raisedEvents(caller.storeId)).toHaveLength(1);
  });

  it('lets exactly one of 20 writers holding the same checksum through; the others are refused on If-Match and nothing is lost', async () => {
    const { caller } = await writer();
    const xid = unique('race');
    accepted(await putProduct(caller, xid, productWrite({ name: 'Table', price: 1000, quantity: 5 })));
    const checksum = await checksumOf(caller, xid);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        i % 2
          ? putProduct(caller, xid, productWrite({ name: 'Table', price: 2000 + i, quantity: 5 }), {
              ifMatch: [checksum],
            })
          : patchProduct(caller, xid, productPatch({ price: 2000 + i }), { ifMatch: [checksum] }),
      ),
    );
    const updated = answers.filter((a) => 'result' in a && a.result === 'updated');
    expect(updated).toHaveLength(1);
    expect(answers.filter((a) => 'result' in a && a.result === 'precondition_failed')).toEqual(
      Array(19).fill({ result: 'precondition_failed', header: 'If-Match' }),
    );
    const winner = updated[0];
    if (!winner || !('product' in winner)) return;
    // The winner's write is what is stored, whole: no refused writer changed anything after it.
    const stored = await getProductByExternalId(caller, xid);
    expect(stored).toEqual(winner.product);
    expect(productChecksum(stored)).toBe(productChecksum(winner.product));
    expect(await raisedEvents(caller.storeId, 'product.updated')).toHaveLength(1);
  });
});
