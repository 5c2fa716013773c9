import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { orderFile } from '../fixtures/orders.ts';
import { freePort } from '../fixtures/free-port.ts';

/**
 * Issue 15: `npm start` on a data directory, concurrent writes through every write endpoint and the
 * admin commands that write, then SIGKILL of the whole process group (a power cut: the DynamoDB
 * Local java child dies with it, nothing is flushed on the way out), `npm start` again on the same
 * data, and every acknowledged write read back. CRASH_ROUNDS=10 runs ten rounds (two by default).
 */
const ROUNDS = Number(process.env.CRASH_ROUNDS || 2);
const ROOT = path.resolve(import.meta.dirname, '../..');
const PRODUCTS_PER_ROUND = 12;
/** This worker's environment points at the shared in-memory test store; the child stack must start its own. */
const OWN_STORE = { DYNAMODB_ENDPOINT: '', TABLE_NAME: 'integrations' };


interface Ports {
  api: number;
  dynamodb: number;
}

/** `npm start` in a process group of its own, resolved once it listens. */
function startStack(dataDir: string, ports: Ports): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...OWN_STORE, PORT: String(ports.api), DYNAMODB_PORT: String(ports.dynamodb), DATA_DIR: dataDir, RATE_LIMIT_PER_MINUTE: '1000', LOG_LEVEL: 'warn' },
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

/** The admin CLI as a user runs it, against the stack's store; resolves to its JSON output, or null when it failed. */
function admin(ports: Ports, ...args: string[]): Promise<any> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args, '--json'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...OWN_STORE, DYNAMODB_PORT: String(ports.dynamodb) },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return new Promise((resolve) => child.once('exit', (code) => resolve(code === 0 ? JSON.parse(out) : { failed: err.trim() })));
}

function api(ports: Ports) {
  return async (token: string, method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`http://127.0.0.1:${ports.api}/api/v1/integrations${route}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
}

describe('crash durability: SIGKILL of npm start loses nothing it acknowledged', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'crash-durability-'));
  let stack: ChildProcess | undefined;
  afterAll(async () => {
    if (stack) await killGroup(stack);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`keeps every acknowledged write across ${ROUNDS} kill/restart rounds`, { timeout: ROUNDS * 240_000 + 60_000 }, async () => {
    const ports = { api: await freePort(), dynamodb: await freePort() };
    const call = api(ports);
    const store = `crash-${randomUUID().slice(0, 8)}`;
    const orderFileDir = mkdtempSync(path.join(tmpdir(), 'crash-orders-'));
    const writeOrderFile = (reference: string) => {
      const file = path.join(orderFileDir, `${reference}.json`);
      writeFileSync(file, JSON.stringify(orderFile({ reference })));
      return file;
    };
    stack = await startStack(dataDir, ports);
    expect(await admin(ports, 'stores', 'create', '--id', store, '--name', 'Crash', '--currency', 'EUR')).toMatchObject({ id: store });
    const main = await admin(ports, 'keys', 'create', '--store', store, '--name', 'main', '--abilities', 'catalog:read,catalog:write,orders:read,orders:write-status,content:read,content:write');
    let rotating = await admin(ports, 'keys', 'create', '--store', store, '--name', 'rotating', '--abilities', 'catalog:read');

    const products = new Map<number, string>(); // id → name, every acknowledged PUT
    const orders = new Map<string, string>(); // reference → acknowledged status
    const published = new Set<string>();
    const createdKeys: string[] = [];
    const retiredTokens: string[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Set-up of this round, acknowledged before the burst: orders to move, pages to publish.
      const placed = [`R${round}-A`, `R${round}-B`, `R${round}-C`, `R${round}-D`];
      for (const reference of placed) {
        expect(await admin(ports, 'orders', 'place', '--store', store, '--file', writeOrderFile(reference))).toMatchObject({ reference });
        orders.set(reference, 'pending');
      }
      const pages = [`p${round}-1`, `p${round}-2`, `p${round}-3`];
      for (const xid of pages) {
        const saved = await call(main.token, 'PUT', `/content/pages/${xid}`, { type: 'page', title: xid, slug: xid, body: `<p>${xid}</p>` });
        expect(saved.status).toBe(200);
      }

      // The burst: everything at once, then the kill as soon as the last answer is in.
      const newRefs = [`R${round}-NEW1`, `R${round}-NEW2`];
      const results = await Promise.all([
        ...Array.from({ length: PRODUCTS_PER_ROUND }, async (_, i) => {
          const name = `Crash ${round}-${i}`;
          const res = await call(main.token, 'PUT', `/catalog/products/crash-${round}-${i}`, { name, price: 100 + i, sku: `CR-${round}-${i}` });
          if (res.status === 200) products.set(res.body.data.id, name);
          return res.status;
        }),
        ...placed.slice(0, 2).map(async (reference) => {
          const res = await call(main.token, 'POST', `/orders/${reference}/status`, { status: 'processing' }, { 'Idempotency-Key': randomUUID() });
          if (res.status === 200) orders.set(reference, 'processing');
          return res.status;
        }),
        ...placed.slice(2).map(async (reference) => {
          const out = await admin(ports, 'orders', 'mark-paid', '--store', store, '--reference', reference);
          if (!out.failed) orders.set(reference, 'paid');
          return out.failed ?? 200;
        }),
        ...newRefs.map(async (reference) => {
          const out = await admin(ports, 'orders', 'place', '--store', store, '--file', writeOrderFile(reference));
          if (!out.failed) orders.set(reference, 'pending');
          return out.failed ?? 200;
        }),
        ...pages.map(async (xid) => {
          const res = await call(main.token, 'POST', `/content/pages/${xid}/publish`, undefined, { 'Idempotency-Key': randomUUID() });
          if (res.status === 200) published.add(xid);
          return res.status;
        }),
        (async () => {
          const out = await admin(ports, 'keys', 'create', '--store', store, '--name', `round ${round}`, '--abilities', 'catalog:read');
          if (!out.failed) createdKeys.push(out.token);
          return out.failed ?? 200;
        })(),
        (async () => {
          const out = await admin(ports, 'keys', 'rotate', '--id', String(rotating.id));
          if (!out.failed) {
            retiredTokens.push(rotating.token);
            rotating = out;
          }
          return out.failed ?? 200;
        })(),
      ]);
      await killGroup(stack);
      stack = await startStack(dataDir, ports);

      // Only a 500 (the local Lambda timeout on a busy machine) may stand for "not acknowledged".
      expect(results.filter((s) => s !== 200 && s !== 500), `round ${round}`).toEqual([]);
      for (const [id, name] of products) {
        const res = await call(main.token, 'GET', `/products/${id}`);
        expect([round, id, res.status, res.body.data?.name]).toEqual([round, id, 200, name]);
      }
      // Nothing half-written: the count (the id sequence) names exactly the products that exist.
      const list = await call(main.token, 'GET', '/products?limit=50');
      expect(list.status).toBe(200);
      const total = list.body.total as number;
      expect(list.body.data.map((p: { id: number }) => p.id)).toEqual(Array.from({ length: Math.min(total, 50) }, (_, i) => i + 1));
      expect([(await call(main.token, 'GET', `/products/${total}`)).status, (await call(main.token, 'GET', `/products/${total + 1}`)).status]).toEqual([200, 404]);
      const statusOf = new Map<string, string>();
      for (let cursor: number | null = 0; cursor !== null; ) {
        const page = await call(main.token, 'GET', `/orders?limit=50&cursor=${cursor}`);
        for (const o of page.body.data as { reference: string; status: string }[]) statusOf.set(o.reference, o.status);
        cursor = page.body.next_cursor;
      }
      for (const [reference, status] of orders) expect([round, reference, statusOf.get(reference)]).toEqual([round, reference, status]);
      const storedPages = await call(main.token, 'GET', '/content/pages?limit=50');
      const pageStatus = new Map(storedPages.body.data.map((p: { external_id: string; status: string }) => [p.external_id, p.status]));
      for (const xid of published) expect([round, xid, pageStatus.get(xid)]).toEqual([round, xid, 'published']);
      for (const token of [...createdKeys, rotating.token]) expect([round, (await call(token, 'GET', '/products?limit=1')).status]).toEqual([round, 200]);
      for (const token of retiredTokens) expect([round, (await call(token, 'GET', '/products?limit=1')).status]).toEqual([round, 401]);
    }
    // The rounds acknowledged something of every kind (a burst that only timed out proves nothing).
    expect(products.size).toBeGreaterThan(0);
    expect(published.size).toBeGreaterThan(0);
    expect(retiredTokens.length).toBeGreaterThan(0);
    rmSync(orderFileDir, { recursive: true, force: true });
  });
});
