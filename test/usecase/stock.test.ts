import { describe, expect, it } from 'vitest';
import {
  accepted,
  adjustStock,
  getProductByExternalId,
  idempotentRequest,
  newKey,
  outcome,
  putProduct,
  productWrite,
  raisedEvents,
  stockDelta,
  storeAnswer,
  storeWithCaller,
  unique,
  type TestCaller,
} from '#fixtures/usecase.ts';
import { productChecksum } from '#domain/product/checksum.ts';

/**
 * The stock use case (shared/app/stock.ts) called in-process: what the caller caused comes back as a
 * value, for the route to present; only faults are thrown. The route's statuses, headers and bodies
 * are test/integration/catalog-stock.test.ts's.
 */
const path = (externalId: string) => `/catalog/products/${externalId}/stock`;

async function product(caller: TestCaller, quantity: number, sku = 'SKU-1') {
  const externalId = unique('stock');
  const written = accepted(
    await putProduct(caller, externalId, productWrite({ name: 'Oak stool', price: 4900, sku, quantity })),
  );
  expect(written).toMatchObject({ result: 'created' });
  return externalId;
}

const offersOf = async (caller: TestCaller, externalId: string) =>
  (await getProductByExternalId(caller, externalId)).offers;
const quantityOf = async (caller: TestCaller, externalId: string) => (await offersOf(caller, externalId))[0]?.quantity;

/** One delta under a fresh Idempotency-Key (or `key`), with the request's If-Match if given. */
function delta(
  caller: TestCaller,
  externalId: string,
  body: Record<string, unknown>,
  options: {
    key?: string;
    condition?: { ifMatch?: string[] | '*'; createOnly?: boolean };
    headers?: Record<string, string>;
  } = {},
) {
  const request = idempotentRequest(caller, path(externalId), body, options);
  return outcome(adjustStock(caller, externalId, stockDelta(body), request, options.condition));
}

describe('adjustStock', () => {
  it('returns the stock refusals and a missing product as outcomes, writing nothing', async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    const externalId = await product(caller, 2);
    expect(await delta(caller, externalId, { delta: -3 })).toMatchObject({
      kind: 'refused',
      code: 'insufficient_stock',
      field: 'delta',
    });
    expect(await delta(caller, externalId, { delta: -1, expected_quantity: 5 })).toMatchObject({
      kind: 'refused',
      code: 'quantity_changed',
      field: 'expected_quantity',
    });
    expect(await delta(caller, externalId, { delta: 1, sku: 'NONE' })).toMatchObject({
      kind: 'refused',
      code: 'validation_failed',
      field: 'sku',
    });
    expect(await delta(caller, unique('none'), { delta: 1 })).toMatchObject({ kind: 'refused', code: 'not_found' });
    // None of them wrote: the quantity is what the PUT set, and no event was raised.
    expect(await quantityOf(caller, externalId)).toBe(2);
    expect(await raisedEvents(caller.storeId, 'product.stock_changed')).toEqual([]);
    expect(await delta(caller, externalId, { delta: -2 })).toMatchObject({ kind: 'answered' });
    expect(await quantityOf(caller, externalId)).toBe(0);
  });

  it('adjusts the variant a sku names, answers the product with its offers and stores the answer with the change', async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    const externalId = await product(caller, 5, 'RED-1');
    const done = await delta(caller, externalId, { delta: -5, sku: 'RED-1' });
    expect(done).toMatchObject({
      kind: 'answered',
      answer: { data: { external_id: externalId, quantity: 0, offers: [{ sku: 'RED-1', quantity: 0 }] } },
      stored: { status: 200 },
    });
    if (done.kind !== 'answered') return;
    // What was committed with the change is exactly the answer, for a replay to send again.
    expect(JSON.parse(done.stored!.body)).toEqual(done.answer);
    const [event] = await raisedEvents(caller.storeId, 'product.stock_changed');
    expect(event?.payload.data).toMatchObject({ sku: 'RED-1', delta: -5, quantity: 0 });
  });

  it('gives 50 racing deltas of -1 on a quantity of 30 exactly 30 answers, 20 insufficient_stock, quantity 0 and 30 events', async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    const externalId = await product(caller, 30);
    // A delta that kept losing to the others past its rounds is refused retryably (resource_busy),
    // having written nothing: it is run again under its Idempotency-Key, as a client does.
    const keys = Array.from({ length: 50 }, () => unique('k'));
    const send = (key: string) => delta(caller, externalId, { delta: -1 }, { key });
    const results = await Promise.all(keys.map(send));
    for (
      let round = 0;
      round < 20 && results.some((r) => r.kind === 'refused' && r.code === 'resource_busy');
      round++
    ) {
      const again = results.flatMap((r, i) => (r.kind === 'refused' && r.code === 'resource_busy' ? [i] : []));
      for (const [j, res] of (await Promise.all(again.map((i) => send(keys[i] as string)))).entries())
        results[again[j] as number] = res;
    }
    const answers = results.flatMap((r) => (r.kind === 'answered' ? [r.answer] : []));
    const refusals = results.filter((r) => r.kind === 'refused');
    expect(answers).toHaveLength(30);
    expect(refusals).toHaveLength(20);
    for (const r of refusals) expect(r).toMatchObject({ code: 'insufficient_stock', field: 'delta' });
    // Every answer showed a different quantity: no delta was lost or applied twice.
    const quantities = answers.map((a) => a.data.offers[0]?.quantity as number).sort((a, b) => a - b);
    expect(quantities).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(await quantityOf(caller, externalId)).toBe(0);
    const events = await raisedEvents(caller.storeId, 'product.stock_changed');
    expect(events).toHaveLength(30);
    expect(events.map((e) => e.payload.data.quantity as number).sort((a, b) => a - b)).toEqual(quantities);
    for (const e of events) {
      expect(e.payload.data).toMatchObject({ sku: 'SKU-1', delta: -1 });
      expect(e.payload.data.product.external_id).toBeUndefined();
    }
    // Nothing else was raised for the deltas: a stock change is not a product.updated.
    expect(await raisedEvents(caller.storeId, 'product.updated')).toEqual([]);
  });

  it('replays its answer under the same Idempotency-Key, applying the delta once, and refuses the key with another body', async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    const externalId = await product(caller, 5);
    const key = unique('k');
    const first = await delta(caller, externalId, { delta: -2 }, { key });
    expect(first).toMatchObject({ kind: 'answered' });
    const replay = await delta(caller, externalId, { delta: -2 }, { key });
    expect(replay).toEqual({ kind: 'replay', response: first.kind === 'answered' ? first.stored : undefined });
    expect(await quantityOf(caller, externalId)).toBe(3);
    expect(await raisedEvents(caller.storeId, 'product.stock_changed')).toHaveLength(1);
    expect(await delta(caller, externalId, { delta: -1 }, { key })).toEqual({ kind: 'reused' });
    // The same key on another product's path is another request.
    const other = await product(caller, 1);
    expect(await delta(caller, other, { delta: -1 }, { key })).toMatchObject({ kind: 'answered' });
  });

  it('replays a refusal the front stored as the answer, even once stock is back', async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    const externalId = await product(caller, 3);
    const key = unique('k');
    const body = { delta: -4 };
    const request = idempotentRequest(caller, path(externalId), body, { key });
    expect(await outcome(adjustStock(caller, externalId, stockDelta(body), request))).toMatchObject({
      code: 'insufficient_stock',
    });
    // The refusal wrote nothing; the HTTP front stores it as the request's answer.
    const response = { status: 422, body: '{"code":"insufficient_stock"}' };
    expect(await storeAnswer(request, response)).toEqual({ kind: 'stored' });
    expect(await delta(caller, externalId, { delta: 10 })).toMatchObject({ kind: 'answered' });
    expect(await delta(caller, externalId, body, { key })).toEqual({ kind: 'replay', response });
    expect(await quantityOf(caller, externalId)).toBe(13);
  });

  it('holds a delta to If-Match on every round, and replays a conditional delta although its own write moved the checksum', async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    const externalId = await product(caller, 10);
    const before = productChecksum(await getProductByExternalId(caller, externalId));
    const key = unique('k');
    const headers = { 'If-Match': `"${before}"` };
    const first = await delta(caller, externalId, { delta: -1 }, { key, headers, condition: { ifMatch: [before] } });
    expect(first).toMatchObject({ kind: 'answered' });
    const after = productChecksum(await getProductByExternalId(caller, externalId));
    expect(after).not.toBe(before);
    // Its retry is its first answer, not a refusal against the state it made.
    expect(await delta(caller, externalId, { delta: -1 }, { key, headers, condition: { ifMatch: [before] } })).toEqual({
      kind: 'replay',
      response: first.kind === 'answered' ? first.stored : undefined,
    });
    // The same key with another condition is another request.
    expect(
      await delta(
        caller,
        externalId,
        { delta: -1 },
        { key, headers: { 'If-Match': `"${after}"` }, condition: { ifMatch: [after] } },
      ),
    ).toEqual({ kind: 'reused' });
    // A stale checksum is refused before anything is decided; a list holding the current one, or `*`, holds.
    expect(await delta(caller, externalId, { delta: -1 }, { condition: { ifMatch: [before] } })).toEqual({
      kind: 'precondition_failed',
      header: 'If-Match',
    });
    expect(await delta(caller, externalId, { delta: -1 }, { condition: { createOnly: true } })).toEqual({
      kind: 'precondition_failed',
      header: 'If-None-Match',
    });
    expect(await delta(caller, externalId, { delta: -2 }, { condition: { ifMatch: ['other', after] } })).toMatchObject({
      kind: 'answered',
    });
    expect(await delta(caller, externalId, { delta: 1 }, { condition: { ifMatch: '*' } })).toMatchObject({
      kind: 'answered',
    });
    // A missing product is not found, whatever the condition.
    expect(await delta(caller, unique('none'), { delta: 1 }, { condition: { ifMatch: [after] } })).toMatchObject({
      code: 'not_found',
    });
    expect(await quantityOf(caller, externalId)).toBe(8);
  });

  it("does not reach another key's product of the same store", async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    const externalId = await product(caller, 5);
    const { caller: other } = await newKey(caller.storeId, ['catalog:write']);
    expect(await delta(other, externalId, { delta: 1 })).toMatchObject({ kind: 'refused', code: 'not_found' });
    expect(await quantityOf(caller, externalId)).toBe(5);
  });
});
