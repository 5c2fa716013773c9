import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { baseUrl, client, createKey, createStore, expectErrorShape, type ApiResponse } from '#fixtures/api.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * The client's side, written here from the RFC and not taken from the service: RFC 8785 for what a
 * write shape holds (strings, integers, null, arrays, objects with ASCII member names) is JSON with
 * members sorted and no whitespace; then SHA-256 hex.
 */
const canonical = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
};
const PUT_DEFAULTS = {
  quantity: 0,
  sku: null,
  description: '',
  status: 'active',
  image_url: null,
  category_external_ids: [],
  tag_external_ids: [],
};
const clientChecksum = (write: Record<string, unknown>) =>
  createHash('sha256')
    .update(canonical({ ...PUT_DEFAULTS, ...write }), 'utf8')
    .digest('hex');

function expectError(res: ApiResponse, status: number, code: string, field?: string | null) {
  expect(res.status).toBe(status);
  expectErrorShape(res.body);
  expect(res.body.code).toBe(code);
  if (field !== undefined) expect(res.body.field).toBe(field);
}

type Api = ReturnType<typeof client>;

/** Every page of the key's checksum list, by next_cursor. */
async function allChecksums(api: Api, limit?: number) {
  const pages: { external_id: string; checksum: string; id: number; updated_at: string }[][] = [];
  let cursor: string | null = null;
  do {
    const params: URLSearchParams = new URLSearchParams({
      ...(limit ? { limit: String(limit) } : {}),
      ...(cursor ? { cursor } : {}),
    });
    const res: ApiResponse = await api.get(`/catalog/products/checksums?${params}`);
    expect(res.status).toBe(200);
    pages.push(res.body.data);
    cursor = res.body.next_cursor;
  } while (cursor !== null);
  return pages;
}

describe('product checksums', () => {
  let storeId: string;
  let keyId: number;
  let token: string;
  let api: Api;
  beforeAll(async () => {
    storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read', 'catalog:write']);
    keyId = key.id;
    token = key.token;
    api = client(token);
    await api.put('/catalog/categories/ck-cat', { name: 'Chairs' });
    await api.put('/catalog/tags/ck-tag', { value: 'oak' });
  });

  it('equals the hash a client computes from its PUT body, in the answer, the read-back and the list', async () => {
    const body = {
      name: 'Oak bench ✓',
      price: 24900,
      sku: 'BEN-1',
      quantity: 3,
      description: 'Solid "oak".\nTwo seats.',
      category_external_ids: ['ck-cat'],
      tag_external_ids: ['ck-tag'],
    };
    const put = await api.put('/catalog/products/ck-put', body);
    expect(put.status).toBe(200);
    expect(put.body.data.checksum).toBe(clientChecksum(body));
    expect((await api.get('/catalog/products/ck-put')).body.data.checksum).toBe(clientChecksum(body));
    const listed = (await allChecksums(api)).flat().find((e) => e.external_id === 'ck-put');
    expect(listed).toEqual({
      id: put.body.data.id,
      external_id: 'ck-put',
      checksum: clientChecksum(body),
      updated_at: put.body.data.updated_at,
    });
  });

  it('follows PATCH: the hash of the PUT body with the patched fields', async () => {
    const body = { name: 'Desk', price: 39900, sku: 'DSK-1' };
    await api.put('/catalog/products/ck-patch', body);
    const patch = { price: 35900, quantity: 4, status: 'draft', image_url: 'https://cdn.example.com/desk.png' };
    const patched = await api.patch('/catalog/products/ck-patch', patch);
    expect(patched.status).toBe(200);
    expect(patched.body.data.checksum).toBe(clientChecksum({ ...body, ...patch }));
    expect(patched.body.data.checksum).not.toBe(clientChecksum(body));
    const listed = (await allChecksums(api)).flat().find((e) => e.external_id === 'ck-patch');
    expect(listed?.checksum).toBe(clientChecksum({ ...body, ...patch }));
  });

  it('follows a stock delta: the hash of the PUT body with the new quantity, also as the ETag', async () => {
    const body = { name: 'Stool', price: 4900, sku: 'STL-1', quantity: 10 };
    await api.put('/catalog/products/ck-stock', body);
    const moved = await api.post(
      '/catalog/products/ck-stock/stock',
      { delta: -4 },
      { 'Idempotency-Key': 'ck-stock-1' },
    );
    expect(moved.status).toBe(200);
    const expected = clientChecksum({ ...body, quantity: 6 });
    expect(moved.body.data.checksum).toBe(expected);
    expect(moved.headers.get('etag')).toBe(`"${expected}"`);
    const listed = (await allChecksums(api)).flat().find((e) => e.external_id === 'ck-stock');
    expect(listed?.checksum).toBe(expected);
    // A replay answers the first answer, ETag included; a write holding that ETag goes through.
    const replay = await api.post(
      '/catalog/products/ck-stock/stock',
      { delta: -4 },
      { 'Idempotency-Key': 'ck-stock-1' },
    );
    expect(replay.headers.get('etag')).toBe(`"${expected}"`);
    const put = await api.put(
      '/catalog/products/ck-stock',
      { ...body, quantity: 6, price: 5900 },
      { 'If-Match': `"${expected}"` },
    );
    expect(put.status).toBe(200);
  });

  it('equals the client hash for products written by the batch, in replace and patch mode', async () => {
    const items = [
      { external_id: 'ck-b1', name: 'Stool', price: 4900 },
      { external_id: 'ck-b2', name: 'Lamp', price: 2900, sku: 'LMP', tag_external_ids: ['ck-tag'] },
    ];
    const res = await api.post('/catalog/products/batch', { items });
    expect(res.status).toBe(200);
    for (const [i, { external_id: _, ...write }] of items.entries())
      expect(res.body.data[i].data.checksum).toBe(clientChecksum(write));
    const patched = await api.post('/catalog/products/batch', {
      mode: 'patch',
      items: [{ external_id: 'ck-b1', quantity: 9 }],
    });
    expect(patched.body.data[0].data.checksum).toBe(clientChecksum({ name: 'Stool', price: 4900, quantity: 9 }));
    const listed = new Map((await allChecksums(api)).flat().map((e) => [e.external_id, e.checksum]));
    expect(listed.get('ck-b1')).toBe(clientChecksum({ name: 'Stool', price: 4900, quantity: 9 }));
    expect(listed.get('ck-b2')).toBe(
      clientChecksum({ name: 'Lamp', price: 2900, sku: 'LMP', tag_external_ids: ['ck-tag'] }),
    );
  });

  it('hashes what is stored: an empty sku is null', async () => {
    const put = await api.put('/catalog/products/ck-empty-sku', { name: 'Rug', price: 100, sku: '' });
    expect(put.body.data.checksum).toBe(clientChecksum({ name: 'Rug', price: 100, sku: null }));
  });

  it('lists a product whose link predates checksums with a computed one', async () => {
    const body = { name: 'Old chair', price: 1500, sku: 'OLD-C' };
    const put = await api.put('/catalog/products/ck-old', body);
    // A link as an earlier version stored it: the product id only, no copy, no checksum.
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.externalId(keyId, 'product', 'ck-old'), type: 'external_id', record_id: put.body.data.id },
      }),
    );
    const listed = (await allChecksums(api)).flat().find((e) => e.external_id === 'ck-old');
    expect(listed).toEqual({
      id: put.body.data.id,
      external_id: 'ck-old',
      checksum: clientChecksum(body),
      updated_at: put.body.data.updated_at,
    });
  });

  it("lists only the key's own products: another key of the store sees its own list", async () => {
    const other = client((await createKey(storeId, ['catalog:read', 'catalog:write'])).token);
    await other.put('/catalog/products/ck-put', { name: 'Not yours', price: 1 });
    const theirs = (await allChecksums(other)).flat();
    expect(theirs.map((e) => e.external_id)).toEqual(['ck-put']);
    expect(theirs[0]?.checksum).toBe(clientChecksum({ name: 'Not yours', price: 1 }));
  });

  it('refuses a bad limit, cursor or parameter with 422 naming it, and a key without catalog:read', async () => {
    expectError(await api.get('/catalog/products/checksums?limit=0'), 422, 'validation_failed', 'limit');
    expectError(await api.get('/catalog/products/checksums?limit=1001'), 422, 'validation_failed', 'limit');
    expectError(await api.get('/catalog/products/checksums?limit=ten'), 422, 'validation_failed', 'limit');
    expectError(await api.get('/catalog/products/checksums?cursor=a%20b'), 422, 'validation_failed', 'cursor');
    expectError(await api.get('/catalog/products/checksums?page=2'), 422, 'validation_failed', 'page');
    const writer = client((await createKey(storeId, ['catalog:write'])).token);
    expectError(await writer.get('/catalog/products/checksums'), 403, 'forbidden');
    expectError(await client(null).get('/catalog/products/checksums'), 401, 'unauthenticated');
    expectError(await client('sia_not-a-key').get('/catalog/products/checksums'), 401, 'unauthenticated');
  });
});

describe('the checksum list of a 2,000-product key', () => {
  let api: Api;
  const ids: string[] = [];
  beforeAll(async () => {
    const storeId = await createStore();
    api = client((await createKey(storeId, ['catalog:read', 'catalog:write'])).token);
    for (let b = 0; b < 20; b++) {
      const items = Array.from({ length: 100 }, (_, i) => {
        const n = b * 100 + i;
        return { external_id: `big-${n}`, name: `Product ${n}`, price: n, quantity: n % 7 };
      });
      ids.push(...items.map((i) => i.external_id));
      const res = await api.post('/catalog/products/batch', { items });
      expect(res.status).toBe(200);
      expect(res.body.data.every((r: { status: number }) => r.status === 200)).toBe(true);
    }
  }, 300_000);

  it.each([undefined, 1000, 333])(
    'pages every product exactly once, in external-id order (limit %s)',
    async (limit) => {
      const pages = await allChecksums(api, limit);
      const size = limit ?? 500;
      expect(pages.map((p) => p.length)).toEqual(
        Array.from({ length: Math.ceil(2000 / size) }, (_, i) => Math.min(size, 2000 - i * size)),
      );
      const listed = pages.flat();
      expect(listed.map((e) => e.external_id)).toEqual([...ids].sort());
      for (const e of listed) {
        const n = Number(e.external_id.slice('big-'.length));
        expect(e.checksum).toBe(clientChecksum({ name: `Product ${n}`, price: n, quantity: n % 7 }));
      }
    },
  );
});

/** The code blocks of a section of docs/catalog-writes.md, by language. */
function documentedBlocks(section: string, lang: string): string[] {
  const text = readFileSync(path.join(root, 'docs', 'catalog-writes.md'), 'utf8');
  const start = text.indexOf(`\n## ${section}\n`);
  const body = text.slice(start, text.indexOf('\n## ', start + 1));
  return [...body.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] as string);
}

describe("docs/catalog-writes.md's checksums, run as written", () => {
  let token: string;
  const mine: Record<string, Record<string, unknown>> = {
    same: { name: 'Same', price: 100, tag_external_ids: [] },
    different: { name: 'Different', price: 200 },
    missing: { name: 'Missing', price: 300 },
  };
  const dirs: string[] = [];
  beforeAll(async () => {
    const storeId = await createStore();
    token = (await createKey(storeId, ['catalog:read', 'catalog:write'])).token;
    const api = client(token);
    await api.put('/catalog/products/same', { name: 'Same', price: 100 });
    await api.put('/catalog/products/different', { name: 'Different', price: 250 });
    await api.put('/catalog/products/extra', { name: 'Extra', price: 400 });
  });
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const expected = { missing: ['missing'], different: ['different'], extra: ['extra'] };

  it('shows the canonical form whose hash is the served checksum', async () => {
    const [shown] = documentedBlocks('Checksums', 'json');
    const api = client(token);
    const body = { name: 'Oak bench', price: 24900, sku: 'BEN-1', quantity: 3, category_external_ids: ['chairs'] };
    await api.put('/catalog/categories/chairs', { name: 'Chairs' });
    const put = await api.put('/catalog/products/doc-bench', body);
    expect(shown?.trim()).toBe(canonical({ ...PUT_DEFAULTS, ...body }));
    expect(put.body.data.checksum).toBe(createHash('sha256').update(shown!.trim()).digest('hex'));
    await api.put('/catalog/products/doc-bench', body);
    mine['doc-bench'] = body;
  });

  it('TypeScript: finds the missing, different and extra products', () => {
    const [code] = documentedBlocks('Checksums', 'ts');
    // Beside node_modules, so that the block's `import canonicalize from 'canonicalize'` resolves as in a
    // project; .mts: an ES module wherever it lies.
    const dir = mkdtempSync(path.join(root, 'node_modules', '.cache', 'doc-reconcile-'));
    dirs.push(dir);
    writeFileSync(path.join(dir, 'reconcile.mts'), code!);
    writeFileSync(
      path.join(dir, 'run.mts'),
      `import { reconcile } from './reconcile.mts';
const mine = new Map(Object.entries(JSON.parse(process.env.MINE!)));
console.log(JSON.stringify(await reconcile(process.env.BASE!, process.env.KEY!, mine as never)));`,
    );
    const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(dir, 'run.mts')], {
      cwd: root,
      env: { ...process.env, BASE: baseUrl(), KEY: token, MINE: JSON.stringify(mine) },
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual(expected);
  });

  it('Python: finds the missing, different and extra products', () => {
    const [code] = documentedBlocks('Checksums', 'python');
    const dir = mkdtempSync(path.join(tmpdir(), 'doc-reconcile-'));
    dirs.push(dir);
    const script = `${code}\nimport os\nprint(json.dumps(reconcile(os.environ["BASE"], os.environ["KEY"], json.loads(os.environ["MINE"]))))\n`;
    writeFileSync(path.join(dir, 'reconcile.py'), script);
    const out = execFileSync('python3', [path.join(dir, 'reconcile.py')], {
      env: { ...process.env, BASE: baseUrl(), KEY: token, MINE: JSON.stringify(mine) },
      encoding: 'utf8',
    });
    expect(JSON.parse(out)).toEqual(expected);
  });
});
