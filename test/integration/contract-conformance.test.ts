/**
 * Contract audit (docs/contract.md): one `it` per finding, named by what the contract
 * requires. The tests that fail today pin confirmed deviations; the passing ones guard contract
 * points that had no test yet.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { adminCommand, createStore, storeWithKey } from '#fixtures/api.ts';
import { freePort } from '#fixtures/free-port.ts';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The environment of a child process: no npm settings inherited from a surrounding `npm test -s`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...extra };
  for (const name of Object.keys(env)) {
    if (/^npm_config_(loglevel|silent|quiet)$/i.test(name)) delete env[name];
  }
  return env;
}

/** The admin CLI against the test store, run as the contract writes it (`npm run admin -- ...`) or directly. */
async function cli(
  args: string[],
  via: 'npm' | 'node' = 'node',
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = childEnv({ DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'), TABLE_NAME: inject('tableName') });
  const [file, argv] =
    via === 'npm'
      ? ['npm', ['run', 'admin', '--', ...args]]
      : [process.execPath, ['--import', 'tsx', 'bin/admin.ts', ...args]];
  try {
    const { stdout, stderr } = await run(file as string, argv as string[], { env, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const READ_SHAPE = [
  'id',
  'name',
  'description',
  'sku',
  'thumbnail_url',
  'quantity',
  'currency_code',
  'min_price',
  'max_price',
  'weight',
  'length',
  'height',
  'width',
  'has_offers',
  'is_archived',
  'category_id',
  'created_at',
  'updated_at',
];

/** True while any process of the group is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves once the group has no process left. Only npm is this process's child, so there is no
 * event for the others (tsx's node, java): the group is probed every 50 ms, a syscall each.
 */
async function groupExited(pgid: number, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (groupAlive(pgid)) {
    if (Date.now() > until) throw new Error(`timed out waiting for process group ${pgid} to exit`);
    await sleep(50);
  }
}

type Service = Awaited<ReturnType<typeof npmStart>>;

/** Every `npm start` of the file, so that afterAll stops whatever a failed test left running. */
const started: { pgid: number; dataDir: string }[] = [];

/** `npm start` in its own process group (as in a terminal), on the given ports and its own DATA_DIR. */
async function npmStart(dataDir: string, port: number, dynamodbPort: number) {
  const env = childEnv({ PORT: String(port), DYNAMODB_PORT: String(dynamodbPort), DATA_DIR: dataDir });
  for (const name of ['DYNAMODB_ENDPOINT', 'TABLE_NAME', 'LOG_LEVEL', 'RATE_LIMIT_PER_MINUTE']) delete env[name];
  const child: ChildProcess = spawn('npm', ['start'], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push({ pgid: child.pid!, dataDir });
  let out = '';
  const onOutput = new Set<() => void>();
  const append = (d: Buffer) => {
    out += d;
    for (const check of onOutput) check();
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  // Every process of the group writes into these pipes: once they are closed, `out` holds all of it
  // (the group can be gone while its last lines still wait in a pipe on a loaded machine).
  let ended = false;
  const closed = new Promise<void>((resolve) =>
    child.once('close', () => {
      ended = true;
      for (const check of onOutput) check();
      resolve();
    }),
  );
  /** Resolves at the chunk of output that matches `pattern`; fails once the output ended without it, or after `ms`. */
  const printed = (what: string, pattern: RegExp, ms: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}:\n${out}`)), ms);
      const finish = (err?: Error) => {
        clearTimeout(timer);
        onOutput.delete(check);
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        if (pattern.test(out)) finish();
        else if (ended) finish(new Error(`npm start ended without ${what}:\n${out}`));
      };
      onOutput.add(check);
      check();
    });
  // A first start seeds the demo store before it prints the key: the slowest step of this file.
  await printed('the demo key', /demo key:\s+sia_\S+/, 240_000);
  return {
    pgid: child.pid!,
    token: /demo key:\s+(sia_\S+)/.exec(out)![1]!,
    output: () => out,
    printed,
    closed,
    baseUrl: `http://127.0.0.1:${port}/api/v1/integrations`,
  };
}

/**
 * Each start costs a JVM and a first one the demo store's seed, so the file starts the service twice,
 * one seed: the Ctrl-C test's restart is the service the SIGTERM test then stops (it starts one of its
 * own when it runs without that test). Concurrent with the other suites, which share nothing with it,
 * and first in the file, so that this longest path takes the first of vitest's concurrent slots; its
 * own tests run in order.
 */
describe.concurrent('contract: npm start', () => {
  let restarted: Service | undefined;
  const putCategory = (svc: Service) =>
    fetch(`${svc.baseUrl}/catalog/categories/audit-persist`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${svc.token}`, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ name: 'Persisted' }),
    });

  afterAll(() => {
    for (const { pgid } of started) if (groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    for (const { dataDir } of started) rmSync(dataDir, { recursive: true, force: true });
  });

  it.sequential('stops cleanly on Ctrl-C (SIGINT to the process group), leaves no java behind, and keeps data and demo key across a restart (docs/contract.md#running-it)', {
    timeout: 900_000,
  }, async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'audit-sigint-'));
    const port = await freePort();
    const dynamodbPort = await freePort();
    const first = await npmStart(dataDir, port, dynamodbPort);
    expect(first.output()).toContain('demo store:   demo (seeded now)');
    // npm start runs the node npm installed, as this file does (test/infra/node-version.test.ts: the Lambdas' major).
    expect(first.output()).toContain(`node:         ${process.version}`);
    const put = await putCategory(first);
    expect(put.status).toBe(200);
    const created = ((await put.json()) as { data: { id: number } }).data;
    // One log line per request.
    await first.printed(
      'the request log line',
      /PUT \/api\/v1\/integrations\/catalog\/categories\/audit-persist 200/,
      60_000,
    );
    process.kill(-first.pgid, 'SIGINT');
    await groupExited(first.pgid, 90_000);
    await first.closed;
    expect(first.output().slice(-3000)).toContain('SIGINT: stopping');

    const second = await npmStart(dataDir, port, dynamodbPort);
    expect(second.token).toBe(first.token);
    expect(second.output()).not.toContain('(seeded now)');
    const again = await putCategory(second);
    expect(((await again.json()) as { data: { id: number } }).data.id).toBe(created.id);
    restarted = second;
  });

  it.sequential('stops the whole service (API, DynamoDB Local) when the npm process gets SIGTERM (docs/contract.md#running-it: stops cleanly)', {
    timeout: 600_000,
  }, async () => {
    const svc =
      restarted ??
      (await npmStart(mkdtempSync(path.join(tmpdir(), 'audit-sigterm-')), await freePort(), await freePort()));
    const before = await fetch(`${svc.baseUrl}/products/1`, { headers: { Authorization: `Bearer ${svc.token}` } });
    expect(before.status).toBe(200);
    process.kill(svc.pgid, 'SIGTERM'); // the npm process only, as a supervisor or `kill <npm pid>` does
    // Once npm is gone, tsx, the server and java must follow (npm forwards no signal to them by
    // itself); the deadline is generous, as a loaded machine stops a JVM slowly.
    await groupExited(svc.pgid, 90_000).catch(() => undefined);
    const stillAnswering = await fetch(`${svc.baseUrl}/products`).then(
      () => true,
      () => false,
    );
    expect({ stillAnswering, processesLeft: groupAlive(svc.pgid) }).toEqual({
      stillAnswering: false,
      processesLeft: false,
    });
  });
});

describe.concurrent('contract: HTTP', () => {
  it('puts RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset on a 403 too (docs/contract.md#limits: every response)', async () => {
    const { client: api } = await storeWithKey(['catalog:read']);
    expect((await api.get('/products')).headers.get('ratelimit-remaining')).toBe('59');
    const res = await api.get('/orders');
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'forbidden' });
    // The 403 is counted against the allowance (the next request sees 57 left), but it carries no RateLimit-* headers.
    expect(res.headers.get('ratelimit-limit')).toBe('60');
    expect(res.headers.get('ratelimit-remaining')).toMatch(/^(58|59)$/);
    expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
  });

  it('answers PUT and PATCH with the mapped product: the read shape plus external_id, the two id lists and the checksum, no offers (docs/contract.md#products, docs/contract.md#resources-and-fields)', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const expected = [...READ_SHAPE, 'external_id', 'category_external_ids', 'tag_external_ids', 'checksum'].sort();
    const put = await api.put('/catalog/products/audit-1', { name: 'Oak bench', price: 24900 });
    expect(put.status).toBe(200);
    expect(Object.keys(put.body.data).sort()).toEqual(expected);
    const patch = await api.patch('/catalog/products/audit-1', { quantity: 2 });
    expect(patch.status).toBe(200);
    expect(Object.keys(patch.body.data).sort()).toEqual(expected);
  });
});

describe.concurrent('contract: admin CLI', () => {
  it('prints exactly one JSON document on stdout for `npm run admin -- <command> --json` (docs/contract.md#admin-cli)', async () => {
    const id = `audit-${Date.now().toString(36)}`;
    const out = await cli(
      ['stores', 'create', '--id', id, '--name', 'Audit store', '--currency', 'EUR', '--json'],
      'npm',
    );
    expect(out.code).toBe(0);
    // npm's own "> store-integration-api@0.1.0 admin" banner lands on stdout before the document.
    expect(() => JSON.parse(out.stdout)).not.toThrow();
    expect(JSON.parse(out.stdout)).toMatchObject({ id, name: 'Audit store', currency_code: 'EUR' });
  });

  it('exits non-zero with a one-line error for an unknown flag instead of ignoring it (docs/contract.md#admin-cli: malformed arguments)', async () => {
    const store = await createStore();
    // A typo of --webhook-url: today the key is created without a webhook and the CLI says nothing.
    const out = await cli([
      'keys',
      'create',
      '--store',
      store,
      '--name',
      'crm',
      '--abilities',
      'orders:read',
      '--webhookurl',
      'https://crm.example.com/hooks',
      '--json',
    ]);
    expect(out.code).not.toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect((await adminCommand<{ data: unknown[] }>('keys list', { store })).data).toHaveLength(0);
  });

  it('prints the key as it is, last_used_at included, from keys set-webhook, rotate and revoke (docs/contract.md#admin-cli: "the key")', async () => {
    const { storeId, key, client: api } = await storeWithKey(['catalog:read']);
    expect((await api.get('/products')).status).toBe(200);
    const listed = (
      await adminCommand<{ data: { id: number; last_used_at: string | null }[] }>('keys list', { store: storeId })
    ).data.find((k) => k.id === key.id)!;
    expect(listed.last_used_at).toMatch(/Z$/);
    const webhook = await adminCommand<{ last_used_at: string | null }>('keys set-webhook', { id: key.id, url: '' });
    const rotated = await adminCommand<{ last_used_at: string | null }>('keys rotate', { id: key.id });
    const revoked = await adminCommand<{ last_used_at: string | null; status: string }>('keys revoke', { id: key.id });
    expect(revoked.status).toBe('revoked');
    expect({ webhook: webhook.last_used_at, rotated: rotated.last_used_at, revoked: revoked.last_used_at }).toEqual({
      webhook: listed.last_used_at,
      rotated: listed.last_used_at,
      revoked: listed.last_used_at,
    });
  });
});
