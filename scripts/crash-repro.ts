/**
 * Issue 15 reproduction: `npm start` on a DATA_DIR, 40 concurrent PUT /catalog/products/crash-{i}
 * (all 200), SIGKILL of the whole process group (DynamoDB Local's java included), `npm start`
 * again on the same DATA_DIR, then every acknowledged product read back.
 *
 * Under load some PUTs answer 500 (the local Lambda timeout); only the 200s are counted.
 * Root cause and the DynamoDB Local-only reproduction: scripts/dynamodb-local-commit-repro.ts.
 *
 *   npx tsx scripts/crash-repro.ts            # PORT=3400 DYNAMODB_PORT=8400, 3 rounds
 *   ROUNDS=5 PORT=3401 DYNAMODB_PORT=8401 npx tsx scripts/crash-repro.ts
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const port = Number(process.env.PORT || 3400);
const dynamodbPort = Number(process.env.DYNAMODB_PORT || 8400);
const rounds = Number(process.env.ROUNDS || 3);
const base = `http://127.0.0.1:${port}/api/v1/integrations`;
const root = path.resolve(import.meta.dirname, '..');

function start(dataDir: string): Promise<ChildProcess> {
  const child = spawn('npx', ['tsx', 'bin/local.ts'], {
    cwd: root,
    detached: true, // its own process group: SIGKILL reaches tsx, node and java at once
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      PORT: String(port),
      DYNAMODB_PORT: String(dynamodbPort),
      DATA_DIR: dataDir,
      RATE_LIMIT_PER_MINUTE: '1000',
    },
  });
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('listening on')) resolve(child);
    });
    child.stderr!.on('data', (d) => (out += d));
    child.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
  });
}

async function killGroup(child: ChildProcess) {
  const gone = new Promise((r) => child.once('exit', r));
  process.kill(-child.pid!, 'SIGKILL');
  await gone;
  // wait until the java child (same group) is gone too
  for (let i = 0; i < 100 && spawnSync('pgrep', ['-g', String(child.pid)]).status === 0; i++)
    await new Promise((r) => setTimeout(r, 50));
}

function admin(dataDir: string, ...args: string[]) {
  const out = spawnSync('npx', ['tsx', 'bin/admin.ts', ...args, '--json'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, DYNAMODB_PORT: String(dynamodbPort), DATA_DIR: dataDir },
  });
  if (out.status !== 0) throw new Error(`admin ${args.join(' ')}: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

let lost = 0;
for (let round = 1; round <= rounds; round++) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'crash-repro-'));
  try {
    let stack = await start(dataDir);
    const store = `crash${round}`;
    admin(dataDir, 'stores', 'create', '--id', store, '--name', 'Crash', '--currency', 'EUR');
    const key = admin(
      dataDir,
      'keys',
      'create',
      '--store',
      store,
      '--name',
      'crash',
      '--abilities',
      'catalog:read,catalog:write',
    );
    const headers = {
      Authorization: `Bearer ${key.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json',
    };
    const results = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const res = await fetch(`${base}/catalog/products/crash-${i}`, {
          method: 'PUT',
          headers,
          body: JSON.stringify({ name: `Crash ${i}`, price: 100 + i, sku: `CR-${i}` }),
        });
        const body = (await res.json()) as { id?: number; data?: { id: number } };
        return { i, status: res.status, id: body.data?.id ?? body.id };
      }),
    );
    const acked = results.filter((r) => r.status === 200 || r.status === 201);
    await killGroup(stack);
    stack = await start(dataDir);
    const missing: typeof acked = [];
    for (const r of acked) {
      const res = await fetch(`${base}/products/${r.id}`, { headers });
      if (res.status !== 200) missing.push(r);
    }
    console.log(
      `round ${round}: acknowledged ${acked.length}/40 (statuses ${[...new Set(results.map((r) => r.status))]}), ids ${Math.min(...acked.map((r) => r.id!))}..${Math.max(...acked.map((r) => r.id!))}, ` +
        `missing after kill+restart: ${missing.map((m) => `crash-${m.i}=id ${m.id}`).join(', ') || 'none'}`,
    );
    lost += missing.length;
    await killGroup(stack);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
console.log(lost ? `LOST ${lost} acknowledged writes` : 'nothing lost');
process.exit(lost ? 1 : 0);
