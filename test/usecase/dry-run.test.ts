import { describe, expect, it } from 'vitest';
import { queryAll } from '#db/core/helpers.ts';
import { tableName } from '#db/core/client.ts';
import { newContext } from '#shared/context.ts';
import {
  accepted,
  changeOrderStatus,
  dryRun,
  idempotentRequest,
  orderIn,
  pageContent,
  productPatch,
  productWrite,
  publishPage,
  putProduct,
  savePage,
  stockDelta,
  storeWithCaller,
  unique,
  type TestCaller,
} from '#fixtures/usecase.ts';

/**
 * Dry runs as the use cases honour them (shared/app/dry-run.ts, docs/api.md#dry-runs): called with a
 * dry-run context, each write answers what the real write answers and writes nothing, no record,
 * event, idempotency record or step of an id sequence. How the fronts present the plan
 * (would_create, changed_fields) is test/integration/dry-run.test.ts's and mcp-dry-run.test.ts's.
 */
const writer = () => storeWithCaller(['catalog:read', 'catalog:write', 'orders:write-status', 'content:write']);

/** Every item of the store's partition and of the key's: what a dry run must leave as it was. */
async function everything(caller: TestCaller) {
  const partition = (pk: string) =>
    queryAll(newContext(), {
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    });
  const [store, key] = await Promise.all([partition(`STORE#${caller.storeId}`), partition(`KEY#${caller.keyId}`)]);
  // The key item itself records when the key was last used, which the authorizer does, not a write.
  return [...store, ...key.filter((i) => i.sk !== 'KEY')];
}

/** The answer of a write with the bookkeeping that moves on every call left out. */
const shape = (product: object) => ({ ...product, created_at: 0, updated_at: 0 });

describe('a dry run of each write', () => {
  it('creates, replaces and patches a product in its answer only, with the id the real create then takes', async () => {
    const { caller } = await writer();
    const xid = unique('dry');
    const before = await everything(caller);
    const planned = accepted(await dryRun.putProduct(caller, xid, productWrite({ name: 'Oak', price: 100 })));
    expect(planned).toMatchObject({ result: 'created', product: { external_id: xid, name: 'Oak' } });
    expect(await everything(caller)).toEqual(before);

    const created = accepted(await putProduct(caller, xid, productWrite({ name: 'Oak', price: 100 })));
    if (!('product' in planned) || !('product' in created)) throw new Error('no product');
    expect(shape(planned.product)).toEqual(shape(created.product));

    const written = await everything(caller);
    const replaced = accepted(await dryRun.putProduct(caller, xid, productWrite({ name: 'Ash', price: 100 })));
    expect(replaced).toMatchObject({ result: 'updated', product: { id: created.product.id, name: 'Ash' } });
    const patched = accepted(await dryRun.patchProduct(caller, xid, productPatch({ description: 'Oiled' })));
    expect(patched).toMatchObject({ result: 'updated', product: { name: 'Oak', description: 'Oiled' } });
    expect(await everything(caller)).toEqual(written);
  });

  it('numbers the creates of a batch from the sequence as it stands, reserving and moving nothing', async () => {
    const { caller } = await writer();
    const xid = unique('dry');
    accepted(await putProduct(caller, xid, productWrite({ name: 'First', price: 100 })));
    // More creates than one insert transaction holds: the real batch would reserve a block of ids.
    const before = await everything(caller);
    const items = Array.from({ length: 25 }, (_, i) => ({ external_id: `${xid}-${i}`, name: `Many ${i}`, price: 1 }));
    const outcomes = await dryRun.upsertProductBatch(caller, items, 'replace');
    expect(outcomes.map((o) => o.ok && o.result)).toEqual(Array(25).fill('created'));
    expect(outcomes.map((o) => o.ok && o.product.id)).toEqual(Array.from({ length: 25 }, (_, i) => i + 2));
    expect(await everything(caller)).toEqual(before);
  });

  it('answers a stock delta and leaves the quantity and the Idempotency-Key as they were', async () => {
    const { caller } = await writer();
    const xid = unique('dry');
    accepted(await putProduct(caller, xid, productWrite({ name: 'Stool', price: 100, sku: 'S-1', quantity: 5 })));
    const before = await everything(caller);
    const body = { delta: -2 };
    const request = idempotentRequest(caller, `/catalog/products/${xid}/stock`, body, { key: 'k-1' });
    const planned = await dryRun.adjustStock(caller, xid, stockDelta(body), request);
    expect(planned).toMatchObject({ kind: 'answered', answer: { data: { offers: [{ quantity: 3 }] } } });
    expect(await everything(caller)).toEqual(before);
    // The key is still free: a dry run of the idempotency record's store stores nothing either.
    expect(await dryRun.storeAnswer(request, { status: 200, body: '{}' })).toEqual({ kind: 'stored' });
    expect(await everything(caller)).toEqual(before);
  });

  it('moves an order, saves and publishes a page, all in the answer only', async () => {
    const { caller } = await writer();
    const order = await orderIn(caller.storeId, 'paid');
    const before = await everything(caller);
    const body = { status: 'processing' };
    const moved = await dryRun.changeOrderStatus(
      caller,
      order.reference,
      'processing',
      idempotentRequest(caller, `/orders/${order.reference}/status`, body),
    );
    expect(moved).toMatchObject({ kind: 'answered', answer: { data: { status: 'processing' } } });

    const xid = unique('dry');
    const content = await pageContent();
    const planned = await dryRun.savePage(caller, xid, content);
    expect(planned).toMatchObject({ data: { external_id: xid, status: 'draft', slug: content.slug } });
    expect(await everything(caller)).toEqual(before);

    const saved = await savePage(caller, xid, content);
    if (!('data' in saved) || !('data' in planned)) throw new Error('not saved');
    expect(planned.data.id).toBe(saved.data.id);
    const after = await everything(caller);
    const publish = idempotentRequest(caller, `/content/pages/${xid}/publish`, undefined);
    expect(await dryRun.publishPage(caller, xid, publish)).toMatchObject({
      kind: 'answered',
      answer: { data: { status: 'published' } },
    });
    expect(await everything(caller)).toEqual(after);
    // The real calls after the dry runs act as first calls.
    expect(await publishPage(caller, xid, publish)).toMatchObject({ kind: 'answered', stored: expect.anything() });
    const real = await changeOrderStatus(
      caller,
      order.reference,
      'processing',
      idempotentRequest(caller, `/orders/${order.reference}/status`, body),
    );
    expect(real).toMatchObject({ kind: 'answered', answer: { data: { status: 'processing' } } });
  });

  it('creates a category or a tag in its answer only, its id unknown', async () => {
    const { caller } = await writer();
    const before = await everything(caller);
    const category = accepted(await dryRun.putCategory(caller, unique('cat'), 'Chairs'));
    expect(category).toMatchObject({ name: 'Chairs' });
    expect((category as { id: number }).id).toBeNaN();
    const tag = accepted(await dryRun.putTag(caller, unique('tag'), 'oak'));
    expect(tag).toMatchObject({ value: 'oak' });
    expect(await everything(caller)).toEqual(before);
  });
});
