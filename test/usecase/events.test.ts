import { beforeAll, describe, expect, it } from 'vitest';
import {
  accepted,
  afterNextQuery,
  changeOrderStatus,
  expireLogEntry,
  idempotentRequest,
  listEvents,
  newKey,
  numberEvents,
  outcome,
  patchProduct,
  placeTestOrder,
  productPatch,
  productWrite,
  putProduct,
  raisedEvents,
  storeWithCaller,
  unique,
  type TestCaller,
} from '#fixtures/usecase.ts';
import { parseTypeFilters } from '#domain/event/changed-fields.ts';

/**
 * The event log read (shared/app/events.ts, `GET /events`) called in-process, on events the use
 * cases raised and numbered as the fan-out numbers them: the families a key may read, the type and
 * field filters, a key's own changes left out, paging, and an expired cursor. The route's query
 * validation and body are test/integration/events-*.test.ts's.
 */
type Params = Parameters<typeof listEvents>[1];
const all: Params = { cursor: undefined, limit: 50, types: undefined, excludeOwn: false };

/** Every page from `cursor` on, as a client walks them. */
async function walk(caller: TestCaller, params: Partial<Params> = {}) {
  const seen: { sequence: number; type: string }[] = [];
  let cursor = params.cursor;
  for (let page = 0; page < 100; page++) {
    const listed = await listEvents(caller, { ...all, ...params, cursor });
    seen.push(...listed.data.map((e) => ({ sequence: e.sequence, type: e.type })));
    if (listed.next_cursor === null) return seen;
    cursor = listed.next_cursor;
  }
  throw new Error('the walk did not end');
}

const filters = (raw: string) => {
  const parsed = parseTypeFilters(raw);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.filters;
};

/** A store whose log holds product, order and their changes, numbered: the caller wrote the catalog and moved the order. */
async function storeWithLog() {
  const { caller } = await storeWithCaller();
  const xid = unique('p');
  accepted(await putProduct(caller, xid, productWrite({ name: 'Desk', price: 100 })));
  accepted(await patchProduct(caller, xid, productPatch({ name: 'Oak desk' })));
  accepted(await patchProduct(caller, xid, productPatch({ price: 120 })));
  const order = await placeTestOrder(caller.storeId);
  const request = idempotentRequest(caller, `/orders/${order.reference}/status`, { status: 'processing' });
  expect(await changeOrderStatus(caller, order.reference, 'processing', request)).toMatchObject({ kind: 'answered' });
  await numberEvents(caller.storeId);
  return caller;
}

describe('listEvents', () => {
  // The tests that only read share one store's log.
  let caller: TestCaller;
  beforeAll(async () => {
    caller = await storeWithLog();
  });

  it('serves the numbered events in order, page by page, each once, whatever the page size', async () => {
    const types = ['product.created', 'product.updated', 'product.updated', 'order.created', 'order.status_changed'];
    for (const limit of [1, 2, 5, 50]) {
      const seen = await walk(caller, { limit });
      expect(
        seen.map((e) => e.type),
        `limit ${limit}`,
      ).toEqual(types);
      expect(seen.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    }
    expect(await listEvents(caller, { ...all, cursor: 5 })).toEqual({ data: [], next_cursor: null });
  });

  it('shows a key only the families its abilities read', async () => {
    const { caller: catalog } = await newKey(caller.storeId, ['catalog:read']);
    const { caller: orders } = await newKey(caller.storeId, ['orders:read']);
    expect((await walk(catalog)).map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect((await walk(orders)).map((e) => e.sequence)).toEqual([4, 5]);
  });

  it('filters by type and by the fields a change moved', async () => {
    expect(await walk(caller, { types: filters('product.updated') })).toEqual([
      { sequence: 2, type: 'product.updated' },
      { sequence: 3, type: 'product.updated' },
    ]);
    expect(await walk(caller, { types: filters('product.updated:price') })).toEqual([
      { sequence: 3, type: 'product.updated' },
    ]);
    expect(
      (await walk(caller, { types: filters('order.status_changed,product.created') })).map((e) => e.sequence),
    ).toEqual([1, 5]);
  });

  it("leaves the key's own changes out with excludeOwn", async () => {
    // The storefront placed the order: the only event this key did not cause.
    expect(await walk(caller, { excludeOwn: true })).toEqual([{ sequence: 4, type: 'order.created' }]);
    const { caller: other } = await newKey(caller.storeId);
    expect(await walk(other, { excludeOwn: true })).toHaveLength(5);
  });

  it('refuses a cursor whose next events are gone, with and without later ones, and not the last one', async () => {
    // A log of its own: this test drops entries.
    const caller = await storeWithLog();
    await expireLogEntry(caller.storeId, 2);
    expect(await outcome(listEvents(caller, { ...all, cursor: 1 }))).toMatchObject({
      kind: 'refused',
      code: 'cursor_expired',
      field: 'cursor',
    });
    await expireLogEntry(caller.storeId, 3);
    expect(await outcome(listEvents(caller, { ...all, cursor: 1 }))).toMatchObject({ code: 'cursor_expired' });
    expect((await listEvents(caller, { ...all, cursor: 3 })).data.map((e) => e.sequence)).toEqual([4, 5]);
    expect(await listEvents(caller, { ...all, cursor: 5 })).toEqual({ data: [], next_cursor: null });
  });

  it('does not take events numbered between its Query and its counter read for expired ones', async () => {
    const { caller } = await storeWithCaller(['catalog:read', 'catalog:write']);
    accepted(await putProduct(caller, unique('p'), productWrite({ name: 'One', price: 1 })));
    accepted(await putProduct(caller, unique('p'), productWrite({ name: 'Two', price: 2 })));
    const [one, two] = await raisedEvents(caller.storeId);
    await numberEvents(caller.storeId, [one?.event_id as string]);
    // A reader at the head of the log while the fan-out numbers the next event: the interleaving
    // made certain, the next event numbered right after the reader's Query came back.
    const numbering = afterNextQuery(() => numberEvents(caller.storeId, [two?.event_id as string]));
    try {
      const page = await listEvents(caller, { ...all, cursor: 1 });
      expect(numbering.fired()).toBe(true);
      expect(page.data.map((e) => e.sequence)).toEqual([2]);
    } finally {
      numbering.remove();
    }
  });
});
