import { newContext } from '#shared/context.ts';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { waitFor } from '#fixtures/webhooks.ts';
import { createGateway } from '#emulation/local/gateway.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { keys } from '#db/keys.ts';
import { batchWrite } from '#db/core/helpers.ts';
import { pendingNameCount } from '#db/name-index/repo.ts';
import { SEARCH_READ_BUDGET_RCU } from '#db/name-index/search.repo.ts';
import { normalizeName } from '#domain/product/product.ts';

/**
 * filter[name] reads at most its budget of read units: a needle whose candidate postings do not
 * fit is refused with 422 filter_too_broad (never answered in part), and what it read on the way
 * stays within the budget. The postings of thousands of products are written straight through
 * the repository layer: the search reads only postings, so the products need not exist.
 */
const CROWD = 3000; // postings of ~90 bytes: ~66 strongly consistent units for one list, over the budget

describe('filter[name] read budget', () => {
  let server: Server;
  let base: string;
  let reported: (cost: { rcu: number }) => void = () => {};
  beforeAll(async () => {
    server = createGateway({ onRequest: (r) => reported({ rcu: r.rcu }) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('refuses a needle too broad for the budget with 422 filter_too_broad, within the budget, and answers a rare one', async () => {
    const { storeId, key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const search = async (needle: string) => {
      const cost = new Promise<{ rcu: number }>((resolve) => (reported = resolve));
      const res = await fetch(`${base}/products?filter%5Bname%5D=${encodeURIComponent(needle)}`, {
        headers: { Authorization: `Bearer ${key.token}` },
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, ...(await cost) };
    };
    const name = (i: number) => normalizeName(`Walnut writing desk ${i}`);
    await batchWrite(
      newContext(),
      Array.from({ length: CROWD }, (_, i) => ({
        PutRequest: { Item: { ...keys.nameGram(storeId, 'wal', 1_000_000 + i), n: name(i) } },
      })),
      8,
    );
    expect([200, 201]).toContain((await api.put('/catalog/products/zebra', { name: 'Zebra lamp', price: 100 })).status);
    await waitFor('the zebra indexed', async () => (await pendingNameCount(newContext(), storeId)) === 0);

    await search('zebra'); // the key's first request on this gateway also reads its token
    const rare = await search('zebra');
    expect(rare.status).toBe(200);
    expect(rare.body.total).toBe(1);

    for (const needle of ['w', 'wa', 'wal', 'WAL']) {
      const broad = await search(needle);
      expect(broad.status, needle).toBe(422);
      expectErrorShape(broad.body);
      expect(broad.body).toMatchObject({ code: 'filter_too_broad', field: 'filter[name]' });
      expect(broad.body.message).toMatch(/longer/);
      // The whole request: the search's budget plus what any search of this key costs besides.
      expect(broad.rcu, needle).toBeLessThanOrEqual(SEARCH_READ_BUDGET_RCU + rare.rcu);
      console.log(
        `filter[name] "${needle}" among ${CROWD} postings: 422 after ${broad.rcu} RCU (rare needle: ${rare.rcu})`,
      );
    }
    // A needle with a rare trigram besides the crowded one is answered from the rare list.
    expect((await search('walnut writing desk zebra')).status).toBe(200);
  });

  it('answers a needle too broad with the whole 422: its code, a message naming the needle and the budget, its field', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read']);
    await batchWrite(
      newContext(),
      Array.from({ length: CROWD }, (_, i) => ({
        PutRequest: { Item: { ...keys.nameGram(storeId, 'oak', 1_000_000 + i), n: normalizeName(`Oak shelf ${i}`) } },
      })),
      8,
    );
    const res = await fetch(`${base}/products?filter%5Bname%5D=Oak`, {
      headers: { Authorization: `Bearer ${key.token}` },
    });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 422,
      body: {
        code: 'filter_too_broad',
        message: `filter[name] "Oak" matches too many product names to be answered within the search's read budget (${SEARCH_READ_BUDGET_RCU} read units); use a longer or rarer needle.`,
        field: 'filter[name]',
      },
    });
  });
});
