import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { orderFile } from '#fixtures/orders.ts';
import { freePort } from '#fixtures/free-port.ts';
import { limited } from '#fixtures/limit.ts';
import { startReceiver, verify, waitFor } from '#fixtures/webhooks.ts';

/**
 * Issue 15: `npm start` on a data directory, concurrent writes through every write endpoint and the
 * admin commands that write, then SIGKILL of the whole process group (a power cut: the DynamoDB
 * Local java child dies with it, nothing is flushed on the way out), `npm start` again on the same
 * data, and every acknowledged write read back. CRASH_ROUNDS=10 runs ten rounds (two by default).
 *
 * Each write kind below has a set-up (acknowledged before the burst), its burst writes (answered
 * 200 = acknowledged and recorded in `expected`) and, after the restart, its read-back.
 */
const ROUNDS = Number(process.env.CRASH_ROUNDS || 2);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PRODUCTS_PER_ROUND = 12;
const BATCH_ITEMS = 4;
const ALL_ABILITIES = 'catalog:read,catalog:write,orders:read,orders:write-status,content:read,content:write';
/**
 * The admin calls outside the burst that do not depend on each other run side by side, three at a
 * time: each is a node and tsx start (22 of them one after another were most of this file's time).
 * The burst itself starts all of its calls at once, as before.
 */
const together = limited(3);
/** The child stack starts its own store, whatever store this worker's environment names. */
const OWN_STORE = { DYNAMODB_ENDPOINT: '', TABLE_NAME: 'integrations', WEBHOOK_SECRET_KEY_FILE: '' };

/** Where the test's `npm start` listens and keeps its data; `npm run admin` is given the same (README, "Run it"). */
interface Ports {
  api: number;
  dynamodb: number;
  dataDir: string;
}

/** `npm start` in a process group of its own, resolved once it listens. */
function startStack(ports: Ports): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      ...OWN_STORE,
      PORT: String(ports.api),
      DYNAMODB_PORT: String(ports.dynamodb),
      DATA_DIR: ports.dataDir,
      RATE_LIMIT_PER_MINUTE: '1000',
      LOG_LEVEL: 'warn',
    },
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('listening on')) resolve(child);
    });
    child.stderr!.on('data', (d) => (out = (out + d).slice(-8000)));
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}): ${out}`)));
  });
}

/** SIGKILL to the whole group (tsx, node, java), and wait until none of it is left. */
async function killGroup(child: ChildProcess): Promise<void> {
  const gone = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGKILL');
  await gone;
  while (spawnSync('pgrep', ['-g', String(child.pid)]).status === 0) await new Promise((r) => setTimeout(r, 50));
}

/** The admin CLI as a user runs it, against the stack's store; resolves to its JSON output, or `{ failed }`. */
function admin(ports: Ports, ...args: string[]): Promise<any> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args, '--json'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...OWN_STORE, DYNAMODB_PORT: String(ports.dynamodb), DATA_DIR: ports.dataDir },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve(code === 0 ? JSON.parse(out) : { failed: err.trim() })),
  );
}

type KeyRow = { id: number; webhook_url: string | null };

function api(ports: Ports) {
  return async (token: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`http://127.0.0.1:${ports.api}/api/v1/integrations${route}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        Accept: 'application/json',
        'Content-Type': 'application/json',
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

/** Every item of a cursor-paged list. */
async function listAll<T>(call: ReturnType<typeof api>, token: string, route: string): Promise<T[]> {
  const all: T[] = [];
  for (let cursor: number | null = 0; cursor !== null; ) {
    const page = await call(token, 'GET', `${route}${route.includes('?') ? '&' : '?'}limit=50&cursor=${cursor}`);
    expect(page.status).toBe(200);
    all.push(...page.body.data);
    cursor = page.body.next_cursor;
  }
  return all;
}

describe('crash durability: SIGKILL of npm start loses nothing it acknowledged', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'crash-durability-'));
  const orderFileDir = mkdtempSync(path.join(tmpdir(), 'crash-orders-'));
  let stack: ChildProcess | undefined;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
  afterAll(async () => {
    if (stack) await killGroup(stack);
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(orderFileDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged write across ${ROUNDS} kill/restart rounds`, {
    timeout: ROUNDS * 300_000 + 60_000,
  }, async () => {
    const ports = { api: await freePort(), dynamodb: await freePort(), dataDir };
    const call = api(ports);
    const store = `crash-${randomUUID().slice(0, 8)}`;
    const writeOrderFile = (reference: string) => {
      const file = path.join(orderFileDir, `${reference}.json`);
      writeFileSync(file, JSON.stringify(orderFile({ reference })));
      return file;
    };
    const hooks = await startReceiver();
    receiver = hooks;
    stack = await startStack(ports);
    expect(await admin(ports, 'stores', 'create', '--id', store, '--name', 'Crash', '--currency', 'EUR')).toMatchObject(
      { id: store },
    );
    // Two webhook keys: one whose secret rotates, one whose URL moves (one admin write each per burst).
    const webhookKey = (name: string) => [
      'keys',
      'create',
      '--store',
      store,
      '--name',
      name,
      '--abilities',
      'catalog:read',
      '--webhook-url',
      hooks.url,
      '--events',
      'order.paid',
    ];
    const [main, first, signing, moving] = await Promise.all(
      [
        ['keys', 'create', '--store', store, '--name', 'main', '--abilities', ALL_ABILITIES],
        ['keys', 'create', '--store', store, '--name', 'rotating', '--abilities', 'catalog:read'],
        webhookKey('signing'),
        webhookKey('moving'),
      ].map((args) => together(() => admin(ports, ...args))),
    );
    let rotating = first;
    // A published page whose edits are draft revisions (docs/contract.md#pages).
    expect(
      (
        await call(main.token, 'PUT', '/content/pages/live', {
          type: 'page',
          title: 'Live',
          slug: 'live',
          body: '<p>live</p>',
        })
      ).status,
    ).toBe(200);
    expect(
      (await call(main.token, 'POST', '/content/pages/live/publish', undefined, { 'Idempotency-Key': randomUUID() }))
        .status,
    ).toBe(200);

    /** What was acknowledged, and so must be there after every restart. */
    const expected = {
      products: new Map<number, string>(), // id → name (PUT, PATCH, batch)
      orders: new Map<string, string>(), // reference → status
      pages: new Map<string, { title: string; status: string }>(), // external id → live title and status
      liveDraftTitle: 'Live',
      categories: [] as string[],
      tags: [] as string[],
      stores: [] as string[],
      liveTokens: [] as string[],
      retiredTokens: [] as string[],
      webhookSecret: signing.webhook_secret as string,
      webhookUrl: hooks.url,
    };
    expected.pages.set('live', { title: 'Live', status: 'published' });

    for (let round = 1; round <= ROUNDS; round++) {
      // Set-up of this round, acknowledged before the burst: the admin calls side by side, beside the requests.
      const placed = [`R${round}-A`, `R${round}-B`, `R${round}-C`, `R${round}-D`];
      const toPublish = [`p${round}-1`, `p${round}-2`, `p${round}-3`];
      const toUnpublish = `u${round}`;
      const [victim] = await Promise.all([
        together(() =>
          admin(ports, 'keys', 'create', '--store', store, '--name', `victim ${round}`, '--abilities', 'catalog:read'),
        ),
        ...placed.map((reference) =>
          together(async () => {
            expect(
              await admin(ports, 'orders', 'place', '--store', store, '--file', writeOrderFile(reference)),
            ).toMatchObject({ reference });
            expected.orders.set(reference, 'pending');
          }),
        ),
        (async () => {
          for (const xid of [...toPublish, toUnpublish]) {
            expect(
              (
                await call(main.token, 'PUT', `/content/pages/${xid}`, {
                  type: 'page',
                  title: xid,
                  slug: xid,
                  body: `<p>${xid}</p>`,
                })
              ).status,
            ).toBe(200);
            expected.pages.set(xid, { title: xid, status: 'draft' });
          }
          expect(
            (
              await call(main.token, 'POST', `/content/pages/${toUnpublish}/publish`, undefined, {
                'Idempotency-Key': randomUUID(),
              })
            ).status,
          ).toBe(200);
          expected.pages.set(toUnpublish, { title: toUnpublish, status: 'published' });
          const patched = await call(main.token, 'PUT', `/catalog/products/patch-${round}`, {
            name: `Patch ${round}`,
            price: 100,
            sku: `PA-${round}`,
          });
          expect(patched.status).toBe(200);
          expected.products.set(patched.body.data.id, `Patch ${round}`);
        })(),
      ]);
      expected.liveTokens.push(victim.token);

      // The burst: everything at once, then the kill as soon as the last answer is in.
      type Outcome = { what: string; status: number | string };
      const acknowledged = (what: string, res: { status: number; body: unknown }, record: () => void): Outcome => {
        if (res.status === 200) record();
        return {
          what,
          status: res.status === 200 || res.status === 500 ? res.status : `${res.status} ${JSON.stringify(res.body)}`,
        };
      };
      const byAdmin = async (args: string[], record: (out: any) => void): Promise<Outcome> => {
        const out = await admin(ports, ...args);
        if (!out.failed) record(out);
        return { what: args.slice(0, 2).join(' '), status: out.failed ?? 200 };
      };
      const newRefs = [`R${round}-NEW1`, `R${round}-NEW2`];
      const results = await Promise.all([
        ...Array.from({ length: PRODUCTS_PER_ROUND }, async (_, i) => {
          const name = `Crash ${round}-${i}`;
          const res = await call(main.token, 'PUT', `/catalog/products/crash-${round}-${i}`, {
            name,
            price: 100 + i,
            sku: `CR-${round}-${i}`,
          });
          return acknowledged('PUT product', res, () => expected.products.set(res.body.data.id, name));
        }),
        (async () => {
          const res = await call(main.token, 'PATCH', `/catalog/products/patch-${round}`, { name: `Patched ${round}` });
          return acknowledged('PATCH product', res, () => expected.products.set(res.body.data.id, `Patched ${round}`));
        })(),
        (async () => {
          const items = Array.from({ length: BATCH_ITEMS }, (_, j) => ({
            external_id: `batch-${round}-${j}`,
            name: `Batch ${round}-${j}`,
            price: 100,
            sku: `BA-${round}-${j}`,
          }));
          const res = await call(main.token, 'POST', '/catalog/products/batch', { items });
          return acknowledged('POST batch', res, () => {
            for (const [j, result] of (res.body.data as { status: number; data: { id: number } }[]).entries()) {
              expect([round, j, result.status]).toEqual([round, j, 200]);
              expected.products.set(result.data.id, `Batch ${round}-${j}`);
            }
          });
        })(),
        (async () => {
          const res = await call(main.token, 'PUT', `/catalog/categories/cat-${round}`, { name: `Category ${round}` });
          return acknowledged('PUT category', res, () => expected.categories.push(`cat-${round}`));
        })(),
        (async () => {
          const res = await call(main.token, 'PUT', `/catalog/tags/tag-${round}`, { value: `Tag ${round}` });
          return acknowledged('PUT tag', res, () => expected.tags.push(`tag-${round}`));
        })(),
        ...placed.slice(0, 2).map(async (reference) => {
          const res = await call(
            main.token,
            'POST',
            `/orders/${reference}/status`,
            { status: 'processing' },
            { 'Idempotency-Key': randomUUID() },
          );
          return acknowledged('POST order status', res, () => expected.orders.set(reference, 'processing'));
        }),
        ...placed
          .slice(2)
          .map((reference) =>
            byAdmin(['orders', 'mark-paid', '--store', store, '--reference', reference], () =>
              expected.orders.set(reference, 'paid'),
            ),
          ),
        ...newRefs.map((reference) =>
          byAdmin(['orders', 'place', '--store', store, '--file', writeOrderFile(reference)], () =>
            expected.orders.set(reference, 'pending'),
          ),
        ),
        ...toPublish.map(async (xid) => {
          const res = await call(main.token, 'POST', `/content/pages/${xid}/publish`, undefined, {
            'Idempotency-Key': randomUUID(),
          });
          return acknowledged('publish', res, () => expected.pages.set(xid, { title: xid, status: 'published' }));
        }),
        (async () => {
          const res = await call(main.token, 'POST', `/content/pages/${toUnpublish}/unpublish`);
          return acknowledged('unpublish', res, () =>
            expected.pages.set(toUnpublish, { title: toUnpublish, status: 'unpublished' }),
          );
        })(),
        (async () => {
          const title = `Live ${round}`;
          const res = await call(main.token, 'PUT', '/content/pages/live', {
            type: 'page',
            title,
            slug: 'live',
            body: `<p>${title}</p>`,
          });
          return acknowledged('PUT page revision', res, () => (expected.liveDraftTitle = title));
        })(),
        (async () => {
          const xid = `new-${round}`;
          const res = await call(main.token, 'PUT', `/content/pages/${xid}`, {
            type: 'blog',
            title: xid,
            slug: xid,
            body: `<p>${xid}</p>`,
          });
          return acknowledged('PUT page', res, () => expected.pages.set(xid, { title: xid, status: 'draft' }));
        })(),
        byAdmin(
          ['stores', 'create', '--id', `${store}-r${round}`, '--name', `Round ${round}`, '--currency', 'EUR'],
          () => expected.stores.push(`${store}-r${round}`),
        ),
        byAdmin(
          ['keys', 'create', '--store', store, '--name', `round ${round}`, '--abilities', 'catalog:read'],
          (out) => expected.liveTokens.push(out.token),
        ),
        byAdmin(['keys', 'rotate', '--id', String(rotating.id)], (out) => {
          expected.retiredTokens.push(rotating.token);
          rotating = out;
        }),
        byAdmin(['keys', 'revoke', '--id', String(victim.id)], () => {
          expected.liveTokens.splice(expected.liveTokens.indexOf(victim.token), 1);
          expected.retiredTokens.push(victim.token);
        }),
        byAdmin(
          ['keys', 'rotate-webhook-secret', '--id', String(signing.id)],
          (out) => (expected.webhookSecret = out.webhook_secret),
        ),
        byAdmin(
          ['keys', 'set-webhook', '--id', String(moving.id), '--url', `${hooks.url}/r${round}`],
          () => (expected.webhookUrl = `${hooks.url}/r${round}`),
        ),
      ]);
      await killGroup(stack);
      stack = await startStack(ports);

      // Only a 500 (the local Lambda timeout on a busy machine) may stand for "not acknowledged".
      expect(
        results.filter((r) => r.status !== 200 && r.status !== 500),
        `round ${round}`,
      ).toEqual([]);
      await readBack(round);
    }
    // The rounds acknowledged something of every kind (a burst that only timed out proves nothing).
    expect(expected.products.size).toBeGreaterThan(ROUNDS);
    expect([...expected.pages.values()].some((p) => p.status === 'published')).toBe(true);
    expect([...expected.pages.values()].some((p) => p.status === 'unpublished')).toBe(true);
    expect([...expected.orders.values()].some((s) => s === 'processing')).toBe(true);
    expect([expected.categories.length, expected.tags.length, expected.stores.length].every((n) => n > 0)).toBe(true);
    expect(expected.retiredTokens.length).toBeGreaterThan(0);
    expect(expected.webhookSecret).not.toBe(signing.webhook_secret);
    expect(expected.webhookUrl).not.toBe(hooks.url);

    async function readBack(round: number) {
      for (const [id, name] of expected.products) {
        const res = await call(main.token, 'GET', `/products/${id}`);
        expect([round, id, res.status, res.body.data?.name]).toEqual([round, id, 200, name]);
      }
      // Nothing half-written: the count (the id sequence) names exactly the products that exist.
      const list = await call(main.token, 'GET', '/products?limit=50');
      expect(list.status).toBe(200);
      const total = list.body.total as number;
      expect(list.body.data.map((p: { id: number }) => p.id)).toEqual(
        Array.from({ length: Math.min(total, 50) }, (_, i) => i + 1),
      );
      expect([
        (await call(main.token, 'GET', `/products/${total}`)).status,
        (await call(main.token, 'GET', `/products/${total + 1}`)).status,
      ]).toEqual([200, 404]);

      const orders = new Map(
        (await listAll<{ reference: string; status: string }>(call, main.token, '/orders')).map((o) => [
          o.reference,
          o.status,
        ]),
      );
      for (const [reference, status] of expected.orders)
        expect([round, reference, orders.get(reference)]).toEqual([round, reference, status]);

      const pages = new Map(
        (await listAll<{ external_id: string; title: string; status: string }>(call, main.token, '/content/pages')).map(
          (p) => [p.external_id, p],
        ),
      );
      for (const [xid, page] of expected.pages)
        expect([round, xid, pages.get(xid)?.title, pages.get(xid)?.status]).toEqual([
          round,
          xid,
          page.title,
          page.status,
        ]);
      const drafts = await listAll<{ external_id: string; title: string }>(
        call,
        main.token,
        '/content/pages?version=draft',
      );
      expect([round, drafts.find((p) => p.external_id === 'live')?.title]).toEqual([round, expected.liveDraftTitle]);

      // Every acknowledged category and tag is there to be referenced.
      const referencing = await call(main.token, 'PUT', `/catalog/products/refs-${round}`, {
        name: `Refs ${round}`,
        price: 1,
        sku: `RF-${round}`,
        category_external_ids: expected.categories,
        tag_external_ids: expected.tags,
      });
      expect([round, referencing.status, referencing.body.error]).toEqual([round, 200, undefined]);
      expected.products.set(referencing.body.data.id, `Refs ${round}`);

      const before = hooks.received.length;
      const [webhookKeys, pinged] = await Promise.all([
        together(async () => (await admin(ports, 'keys', 'list', '--store', store)).data as KeyRow[]),
        together(() => admin(ports, 'webhooks', 'ping', '--id', String(signing.id))),
        ...expected.stores.map((id) =>
          together(async () =>
            expect([round, id, (await admin(ports, 'keys', 'list', '--store', id)).failed]).toEqual([
              round,
              id,
              undefined,
            ]),
          ),
        ),
      ]);
      for (const token of [...expected.liveTokens, rotating.token])
        expect([round, (await call(token, 'GET', '/products?limit=1')).status]).toEqual([round, 200]);
      for (const token of expected.retiredTokens)
        expect([round, (await call(token, 'GET', '/products?limit=1')).status]).toEqual([round, 401]);

      expect([round, webhookKeys.find((k) => k.id === moving.id)?.webhook_url]).toEqual([round, expected.webhookUrl]);
      // The signer holds the acknowledged secret: a ping it signs verifies with that secret.
      expect(pinged).toMatchObject({ status: 204 });
      const ping = await waitFor('the ping', () =>
        hooks.received.slice(before).find((r) => r.body.includes('webhook.ping')),
      );
      expect(() => verify(expected.webhookSecret, ping)).not.toThrow();
    }
  });
});
