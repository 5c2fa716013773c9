import { newContext } from '#shared/context.ts';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { adminCommand, type client, createStore, storeWithKey } from '#fixtures/api.ts';
import { adminChange, seedProduct } from '#fixtures/catalog.ts';
import { createGateway } from '#emulation/local/gateway.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { batchWrite } from '#db/core/helpers.ts';
import { markNamesPending } from '#db/product/index.repo.ts';
import { indexPendingNames, pendingNameCount } from '#db/name-index/repo.ts';
import { indexNameRecords, NAME_INDEX_CHUNK } from '#app/name-index.ts';
import { ENTITY, TABLE } from '#db/core/table.ts';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { nameGrams } from '#domain/product/name-grams.ts';
import { normalizeName } from '#domain/product/product.ts';
import { STREAM_WAIT_MS, waitFor } from '#fixtures/webhooks.ts';

/**
 * filter[name] through the trigram postings the stack's name indexer (the stream consumer the CDK
 * stack deploys) writes, checked against the plain definition: every product whose normalized
 * name contains the normalized needle, before the indexer has run and after.
 */

/** Whether the posting at `key` exists. */
const hasPosting = async (key: { pk: string; sk: string }) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item !== undefined;

/**
 * Waits until the indexer has taken every pending name of the store into the postings: behind
 * every record written before them (test/fixtures/stream-wait.ts), and for `timeoutMs` at most.
 */
async function indexed(storeId: string, timeoutMs = STREAM_WAIT_MS): Promise<void> {
  await waitFor(
    `names of ${storeId} indexed`,
    async () => (await pendingNameCount(newContext(), storeId)) === 0,
    timeoutMs,
  );
}

/**
 * The read-cost test's wait for the 900 names it has just written, ~12,000 postings: 40 s on the
 * idle 2-core machine, and more than the stream's usual 300 s once in a CI run sharing
 * DynamoDB Local with every other file. Twice that, within the test's 900 s timeout.
 */
const BULK_INDEX_WAIT_MS = 2 * STREAM_WAIT_MS;

async function postingsOf(storeId: string, productId: number, name: string) {
  const found: string[] = [];
  for (const gram of nameGrams(normalizeName(name))) {
    if (await hasPosting(keys.nameGram(storeId, gram, productId))) found.push(gram);
  }
  return found;
}

const NAMES = [
  'Walnut Desk',
  'Oak Desk Lamp',
  'Linen Shirt',
  'ÜBER Brass 😀 Bowl',
  'a',
  'ﬁne Ｆｕｌｌwidth',
  'Desk#Tidy 100%',
];
const NEEDLES = [
  'desk',
  'DESK',
  'k l',
  'a',
  'sk',
  '😀',
  ' bowl',
  'über',
  'fine',
  'full',
  'k#t',
  '100%',
  'oak desk lamp',
  'oak desk lamp!',
  'zzz',
  'W',
  'lnu',
];

describe('filter[name] on trigram postings', () => {
  let storeId: string;
  let api: ReturnType<typeof client>;
  const ids = new Map<string, number>();

  const expected = (needle: string) =>
    [...ids]
      .filter(([name]) => normalizeName(name).includes(normalizeName(needle)))
      .map(([, id]) => id)
      .sort((a, b) => a - b);
  const found = async (needle: string) => {
    const res = await api.get(`/products?limit=50&filter%5Bname%5D=${encodeURIComponent(needle)}`);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(res.body.data.length);
    return res.body.data.map((p: { id: number }) => p.id);
  };

  beforeAll(async () => {
    const s = await storeWithKey(['catalog:read', 'catalog:write']);
    storeId = s.storeId;
    api = s.client;
    for (const [i, name] of NAMES.entries()) {
      const res = await api.put(`/catalog/products/n-${i}`, { name, price: 100 });
      expect(res.status).toBe(200);
      ids.set(name, res.body.data.id);
    }
  });

  it('finds exactly the names that contain the needle while they are still pending', async () => {
    // The indexer may have run for some already: either way, every answer is the definition's.
    for (const needle of NEEDLES) expect(await found(needle), needle).toEqual(expected(needle));
  });

  it('finds exactly the same from the postings once the indexer has run, each name under all its trigrams', async () => {
    await indexed(storeId);
    for (const [name, id] of ids) expect(await postingsOf(storeId, id, name)).toEqual(nameGrams(normalizeName(name)));
    for (const needle of NEEDLES) expect(await found(needle), needle).toEqual(expected(needle));
  });

  it('lists everything for an empty filter, and checks the name on the products a SKU names', async () => {
    expect((await api.get('/products?filter%5Bname%5D=')).body.total).toBe(NAMES.length);
    await api.put('/catalog/products/sku-1', { name: 'Copper Kettle', price: 100, sku: 'KET-1' });
    expect((await api.get('/products?filter%5Bsku%5D=KET-1&filter%5Bname%5D=kettle')).body.total).toBe(1);
    expect((await api.get('/products?filter%5Bsku%5D=KET-1&filter%5Bname%5D=walnut')).body.total).toBe(0);
    await api.put('/catalog/products/sku-1', { name: 'Brass Kettle', price: 100, sku: 'KET-1' });
    expect((await api.get('/products?filter%5Bsku%5D=KET-1&filter%5Bname%5D=copper')).body.total).toBe(0);
  });

  it('finds a renamed product under its new name at once, never under the old, and drops the trigrams the old name alone had', async () => {
    const { body } = await api.patch('/catalog/products/n-2', { name: 'Velvet Cushion' });
    const id = body.data.id as number;
    expect(await found('linen')).not.toContain(id);
    expect(await found('cushion')).toContain(id);
    await indexed(storeId);
    expect(await found('linen')).not.toContain(id);
    expect(await found('velvet')).toEqual([id]);
    const kept = nameGrams('velvet cushion');
    expect(await postingsOf(storeId, id, 'Linen Shirt')).toEqual(
      nameGrams('linen shirt').filter((g) => kept.includes(g)),
    );
    expect(await postingsOf(storeId, id, 'Velvet Cushion')).toEqual(nameGrams('velvet cushion'));
  });

  it('indexes a name renamed back and forth to the last name, however often the indexer runs', async () => {
    const product = await seedProduct(storeId, { name: 'Amber Vase' });
    await indexed(storeId);
    for (const name of ['Cobalt Vase', 'Amber Vase', 'Cobalt Vase']) {
      await adminChange(storeId, product.id, (current) => ({
        ...current,
        name,
        updated_at: new Date(Date.parse(current.updated_at) + 1).toISOString(),
      }));
    }
    await indexPendingNames(newContext(), [
      { storeId, productId: product.id },
      { storeId, productId: product.id },
    ]);
    await indexPendingNames(newContext(), [{ storeId, productId: product.id }]);
    await indexed(storeId);
    expect(await found('cobalt')).toEqual([product.id]);
    expect(await found('amber')).toEqual([]);
    expect(await postingsOf(storeId, product.id, 'Amber Vase')).toEqual(
      nameGrams('amber vase').filter((g) => nameGrams('cobalt vase').includes(g)),
    );
  });
});

describe('the name indexer', () => {
  it('takes a batch in a chunk at a time and resumes from the chunk that failed, not from the batch', async () => {
    const storeId = await createStore();
    const names = Array.from({ length: NAME_INDEX_CHUNK + 20 }, (_, i) => ({ id: i + 1, n: `heron ${i + 1}` }));
    const entry = (p: { id: number; n: string }) => ({
      ...keys.namePending(storeId, p.id),
      [TABLE.typeAttribute]: ENTITY.namePending,
      store_id: storeId,
      product_id: p.id,
      n: p.n,
    });
    await batchWrite(
      newContext(),
      names.map((p) => ({ PutRequest: { Item: entry(p) } })),
    );
    // The batch as the stream hands it over, with a record that names no product (a poison record)
    // in the second chunk.
    const records: DynamoDBRecord[] = names.map((p, i) => ({
      eventName: 'INSERT',
      dynamodb: {
        SequenceNumber: String(1000 + i),
        NewImage: marshall(i === NAME_INDEX_CHUNK + 5 ? { ...entry(p), product_id: 'x' } : entry(p)) as never,
      },
    }));
    const outcome = await indexNameRecords(newContext(), records);
    // The stream resumes from the failing chunk's first record, not from the batch's. How many of
    // the first chunk this call indexed itself depends on a race: the stack's own indexer reads the
    // same entries off the stream, and a name it took in first is no longer pending here.
    expect(outcome).toMatchObject({ ok: false, retryFrom: String(1000 + NAME_INDEX_CHUNK) });
    // The first chunk's names are indexed, whoever indexed them first.
    for (const p of names.slice(0, NAME_INDEX_CHUNK)) {
      expect(await hasPosting(keys.nameGram(storeId, 'her', p.id))).toBe(true);
    }
  });
});

describe('products reindex-names', () => {
  it('gives products that predate the index their postings, and never overwrites a newer name', async () => {
    const { storeId, client: api } = await storeWithKey(['catalog:read']);
    const old = [
      await seedProduct(storeId, { name: 'Heron Print' }),
      await seedProduct(storeId, { name: 'Egret Print' }),
    ];
    await indexed(storeId);
    // As a version before the index left them: no postings, no indexed record, nothing pending.
    for (const p of old) {
      const grams = nameGrams(normalizeName(p.name));
      await batchWrite(newContext(), [
        ...grams.map((g) => ({ DeleteRequest: { Key: keys.nameGram(storeId, g, p.id) } })),
        { DeleteRequest: { Key: keys.nameIndexed(storeId, p.id) } },
      ]);
    }
    expect((await api.get('/products?filter%5Bname%5D=print')).body.total).toBe(0);

    expect(await adminCommand('products reindex-names', { store: storeId })).toEqual({
      store_id: storeId,
      products: 2,
    });
    await indexed(storeId);
    expect((await api.get('/products?filter%5Bname%5D=print')).body.data.map((p: { id: number }) => p.id)).toEqual(
      old.map((p) => p.id),
    );

    const [heron] = old;
    await adminChange(storeId, heron!.id, (current) => ({
      ...current,
      name: 'Crane Print',
      updated_at: new Date(Date.parse(current.updated_at) + 1).toISOString(),
    }));
    expect(await markNamesPending(newContext(), [heron!])).toBe(false);
    await indexed(storeId);
    expect((await api.get('/products?filter%5Bname%5D=heron')).body.total).toBe(0);
    expect((await api.get('/products?filter%5Bname%5D=crane')).body.total).toBe(1);
  });

  it('refuses an unknown store with one error', async () => {
    await expect(adminCommand('products reindex-names', { store: 'no-such-store' })).rejects.toThrow(
      /not_found|No store/i,
    );
  });
});

describe('filter[name] read cost', () => {
  let server: Server;
  let base: string;
  // The gateway reports a request's cost once it has answered: a measurement awaits both.
  let reported: (cost: { rcu: number; ops: string }) => void = () => {};

  beforeAll(async () => {
    server = createGateway({ onRequest: (r) => reported({ rcu: r.rcu, ops: r.ops.join(',') }) });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  it('follows the matches, not the catalog: a rare name costs the same among 101 products and among 1,001', async () => {
    const { storeId, key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const search = async (needle: string) => {
      const cost = new Promise<{ rcu: number; ops: string }>((resolve) => (reported = resolve));
      const res = await fetch(`${base}/products?filter%5Bname%5D=${needle}`, {
        headers: { Authorization: `Bearer ${key.token}` },
      });
      const body = (await res.json()) as { total: number };
      return { total: body.total, ...(await cost) };
    };
    const addBulk = async (from: number, count: number) => {
      for (let start = from; start < from + count; start += 100) {
        const items = Array.from({ length: 100 }, (_, i) => ({
          external_id: `b-${start + i}`,
          name: `Walnut item ${start + i}`,
          price: 100,
        }));
        expect((await api.post('/catalog/products/batch', { items })).status).toBe(200);
      }
    };
    await api.put('/catalog/products/zebra', { name: 'Zebra lamp', price: 100 });
    await addBulk(0, 100);
    await indexed(storeId);
    await search('zebra'); // the first request of a key on this gateway also reads its token
    const small = await search('zebra');
    const commonSmall = await search('walnut');
    await addBulk(100, 900);
    await indexed(storeId, BULK_INDEX_WAIT_MS);
    await search('zebra'); // as the token's cached read may have expired meanwhile
    const large = await search('zebra');
    const commonLarge = await search('walnut');
    expect([small.total, large.total]).toEqual([1, 1]);
    expect([commonSmall.total, commonLarge.total]).toEqual([100, 1000]);
    expect(large.rcu).toBe(small.rcu);
    expect(large.ops).toBe(small.ops);
    expect(large.rcu).toBeLessThanOrEqual(8);
    // The common name's cost grows with its matches (10 times as many; the page read stays the same),
    // up to the search's read budget (name-search-budget.test.ts).
    expect(commonLarge.rcu).toBeGreaterThan(commonSmall.rcu + 5);
    console.log(
      `filter[name] RCU: rare ${small.rcu} → ${large.rcu}, common ${commonSmall.rcu} → ${commonLarge.rcu} (101 → 1001 products)`,
    );
  });
});
