import { describe, expect, it } from 'vitest';
import { client, createKey, createStore } from '#fixtures/api.ts';
import { sleep } from '#fixtures/webhooks.ts';

const BATCHES = 10;
const BATCH = 100;
const PUTS = 30;
/** The bound (docs/catalog-writes.md, "Name search after an import"): on the idle machine. */
const SEARCH_BACK_MS = 10_000;
const POLL_MS = 250;
/** Keys that take turns asking, so that the polls stay within each key's allowance. */
const SEARCHERS = 4;

/**
 * filter[name] answers again soon after a CRM's first sync. A store gets 1,000 new products as a
 * client sends them (ten batches of 100, one after another) and then 30 PUTs at once; from the
 * last answer on, `filter[name]` is asked every 250 ms. It answers 503 while the names pending for
 * the indexer are more than a search may read; it must answer 200, with every match, within 10 s.
 * A time is the promise here, so the file lives in test/timing (run on an idle machine).
 */
describe('filter[name] after an import', () => {
  it('answers every match within 10 s of the last write of a 1,000-product import', async () => {
    const store = await createStore();
    const importer = client((await createKey(store, ['catalog:write'])).token);
    const searchers = await Promise.all(
      Array.from({ length: SEARCHERS }, async () => client((await createKey(store, ['catalog:read'])).token)),
    );
    const name = (n: number) => `${n % 4 === 0 ? 'Walnut' : 'Linen'} chair ${n}`;
    for (let b = 0; b < BATCHES; b++) {
      const items = Array.from({ length: BATCH }, (_, i) => {
        const n = b * BATCH + i;
        return { external_id: `crm-${n}`, name: name(n), price: 100 + n };
      });
      const res = await importer.post<{ data: { status: number }[] }>('/catalog/products/batch', { items });
      expect(res.status).toBe(200);
      expect(res.body.data.filter((d) => d.status !== 200)).toEqual([]);
    }
    const puts = await Promise.all(
      Array.from({ length: PUTS }, (_, i) => {
        const n = BATCHES * BATCH + i;
        return importer.put(`/catalog/products/crm-${n}`, { name: name(n), price: 100 + n });
      }),
    );
    expect(puts.map((r) => r.status)).toEqual(puts.map(() => 200));
    const imported = Date.now();
    const walnuts = Array.from({ length: BATCHES * BATCH + PUTS }, (_, n) => n).filter((n) => n % 4 === 0).length;

    let refused = 0;
    for (let i = 0; ; i++) {
      const res = await searchers[i % SEARCHERS]!.get<{ total: number }>('/products?filter%5Bname%5D=walnut&limit=1');
      if (res.status === 200) {
        expect(res.body.total).toBe(walnuts);
        break;
      }
      expect(res.status).toBe(503);
      refused++;
      await sleep(POLL_MS);
    }
    const back = Date.now() - imported;
    console.log(`filter[name] answered ${back} ms after the import's last write (${refused} × 503 before)`);
    expect(back).toBeLessThanOrEqual(SEARCH_BACK_MS);
  });
});
