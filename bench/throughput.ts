/**
 * Product-read throughput against the store's own: how many `GET /products/{id}` the local stack
 * serves per second, next to how many GetItem calls the same DynamoDB Local answers per second
 * through the same SDK client, both with BENCH_CONCURRENCY (16) in flight for BENCH_SECONDS (5),
 * alternately for BENCH_THROUGHPUT_ROUNDS (3) rounds: on a shared machine (and while DynamoDB
 * Local's JVM still warms up) one run of each drifts apart, so each round's ratio compares two runs
 * made side by side, and the section gives the round with the median ratio. Both paths first run
 * for BENCH_WARM_UP_SECONDS (10): against a JVM that is still warming up, the raw path (one call
 * per request) is slowed the most and the ratio reads high (0.42 and 0.69 in two runs with a 1 s warm-up,
 * against 0.18 to 0.26 warm, on the same machine and the same product-read code).
 * A product read is two round trips (the authorizer's UpdateItem, then the GetItem), so 0.5 is
 * the ratio's ceiling when DynamoDB Local is the bottleneck; what falls short of it is CPU spent
 * by the gateway emulation, the authorizer, the handler chain and the SDK in this process. To
 * tell the SDK's part from the rest, each round also runs the authorizer's own call alone
 * (`authenticate`, shared/db/key-auth.repo.ts: the conditional UpdateItem that resolves a key and
 * counts it against its rate limit) and the section splits a product read's CPU into those two
 * calls made raw and what is left: HTTP, the gateway emulation and the handler chains.
 * The raw GetItem calls are made in this process, by the stack's own client; the HTTP requests
 * come from bench/load-client.mjs in a process of its own, as a client of the API would.
 * BENCH_CPU_PROFILE=file writes a V8 CPU profile of the stack during the HTTP run.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#db/client.ts';
import { keys as dbKeys } from '#db/keys.ts';
import { authenticate } from '#db/key-auth.repo.ts';
import { hashToken } from '#domain/key/api-key.ts';
import { config } from '#shared/config.ts';
import { startBenchStack } from './bench-stack.ts';
import { seedProducts } from './seed.ts';
import type { BenchSection } from './section.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const ROUNDS = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 3);
const WARM_UP_SECONDS = Number(process.env.BENCH_WARM_UP_SECONDS ?? 10);
const PRODUCTS = 200;
/** Keys enough that none nears 60 requests a minute at a few thousand requests per second. */
const KEYS = 300;

type Run = { perSecond: number; failed: number; cpuMsPerRequest: number };

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** Runs `one` with CONCURRENCY in flight for `seconds`: completions per second, failures, and this process's CPU per completion. */
async function saturate(one: (i: number) => Promise<boolean>, seconds = SECONDS): Promise<Run> {
  let next = 0;
  let done = 0;
  let failed = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const ok = await one(next++);
        done++;
        if (!ok) failed++;
      }
    }),
  );
  return { perSecond: done / ((performance.now() - started) / 1000), failed, cpuMsPerRequest: cpuMs(cpu) / done };
}

/** Runs bench/load-client.mjs against `urls` and resolves with what it counted. */
function loadClient(args: {
  urls: string[];
  tokens: string[];
  seconds: number;
}): Promise<{ done: number; failed: number; seconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        fileURLToPath(new URL('./load-client.mjs', import.meta.url)),
        JSON.stringify({ ...args, concurrency: CONCURRENCY }),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load client exited with ${code}`)),
    );
  });
}

/** With `file` set, `fn` runs under the V8 profiler (open the .cpuprofile in Chrome DevTools). */
async function profiled<T>(file: string | undefined, fn: () => Promise<T>): Promise<T> {
  if (!file) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}

export const throughputSection: BenchSection = {
  name: 'throughput',
  async run() {
    const bench = await startBenchStack({ storeId: 'throughput', keys: KEYS, streamConsumers: false });
    try {
      await seedProducts(bench.storeId, PRODUCTS);
      const ids = Array.from({ length: PRODUCTS }, (_, i) => i + 1);
      const getItem = async (i: number) => {
        const out = await db().send(
          new GetCommand({
            TableName: tableName(),
            Key: dbKeys.product(bench.storeId, ids[i % ids.length] as number),
            ConsistentRead: true,
          }),
        );
        return out.Item !== undefined;
      };
      const tokenHashes = bench.tokens.map(hashToken);
      // What the authorizer sends for a product read, without HTTP or the Lambda around it.
      const authorize = async (i: number) =>
        (await authenticate(tokenHashes[i % tokenHashes.length] as string, Date.now(), config().rateLimitPerMinute)).ok;
      const urls = ids.map((id) => `${bench.stack.baseUrl}/products/${id}`);
      const throughGateway = async (): Promise<Run> => {
        const cpu = process.cpuUsage();
        const run = await loadClient({ urls, tokens: bench.tokens, seconds: SECONDS });
        return { perSecond: run.done / run.seconds, failed: run.failed, cpuMsPerRequest: cpuMs(cpu) / run.done };
      };
      // DynamoDB Local's JVM and this process's JIT warm up first.
      await saturate(getItem, WARM_UP_SECONDS);
      await loadClient({ urls, tokens: bench.tokens, seconds: WARM_UP_SECONDS });
      await saturate(authorize, WARM_UP_SECONDS / 2);
      const rounds: Array<{ raw: Run; auth: Run; gateway: Run; ratio: number }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const raw = await saturate(getItem);
        const auth = await saturate(authorize);
        const gateway =
          round === 0 ? await profiled(process.env.BENCH_CPU_PROFILE, throughGateway) : await throughGateway();
        rounds.push({ raw, auth, gateway, ratio: gateway.perSecond / raw.perSecond });
      }
      const { raw, auth, gateway, ratio } = [...rounds].sort((a, b) => a.ratio - b.ratio)[
        Math.floor(rounds.length / 2)
      ] as (typeof rounds)[number];
      const rest = gateway.cpuMsPerRequest - raw.cpuMsPerRequest - auth.cpuMsPerRequest;
      const share = (ms: number) => `${((ms / gateway.cpuMsPerRequest) * 100).toFixed(0)}%`;
      const calls = raw.cpuMsPerRequest + auth.cpuMsPerRequest;
      const budget = raw.cpuMsPerRequest / 0.4;
      const busy = (r: Run) => `${((r.perSecond * r.cpuMsPerRequest) / 10).toFixed(0)}%`;
      const row = (name: string, r: Run) =>
        `| ${name} | ${r.perSecond.toFixed(0)}${r.failed ? ` (${r.failed} failed)` : ''} | ${r.cpuMsPerRequest.toFixed(2)} |\n`;
      return (
        '## Product-read throughput\n\n' +
        `${CONCURRENCY} requests in flight for ${SECONDS} s each against the stack's DynamoDB Local; CPU is the stack process's (gateway, ` +
        `authorizer, handlers, SDK) per request. A product read is two round trips, so 0.5 is the ratio's ceiling. ` +
        `${ROUNDS} rounds, each a raw GetItem run, a raw authorizer run, then a gateway run; the rows are the round with the median ratio ` +
        `(each round's raw : gateway requests/s: ${rounds.map((r) => `${r.raw.perSecond.toFixed(0)} : ${r.gateway.perSecond.toFixed(0)} = ${r.ratio.toFixed(2)}`).join('; ')}). ` +
        `Both paths are first run for ${WARM_UP_SECONDS} s: DynamoDB Local's JVM speeds up for tens of seconds, and the raw path (one call per request) gains more from it than the gateway path, so a ratio taken against a cold JVM reads high.\n\n` +
        '| measurement | requests/s | CPU ms/request |\n|---|---|---|\n' +
        row("raw GetItem of a product (consistent, the stack's SDK client)", raw) +
        row("raw authorizer call (authenticate: the key's conditional UpdateItem)", auth) +
        row('GET /products/{id} through the local gateway (client in its own process)', gateway) +
        `| **ratio** GET /products/{id} : raw GetItem | ${ratio.toFixed(2)} | |\n\n` +
        `Where a product read's CPU goes (the stack process, ms per request): its two DynamoDB calls made raw take ${raw.cpuMsPerRequest.toFixed(2)} + ${auth.cpuMsPerRequest.toFixed(2)} ms (${share(calls)}); ` +
        `the remaining ${rest.toFixed(2)} ms (${share(rest)}) is HTTP in and out, the gateway emulation (emulation/local), the authorizer and handler chains and their logging and metrics. ` +
        `Both paths are bound by this process's CPU (busy ${busy(raw)} and ${busy(gateway)} of one core), so the ratio follows CPU per request (${raw.cpuMsPerRequest.toFixed(2)} / ${gateway.cpuMsPerRequest.toFixed(2)} = ${(raw.cpuMsPerRequest / gateway.cpuMsPerRequest).toFixed(2)}). ` +
        (budget > calls
          ? `At 0.4 a product read would have ${budget.toFixed(2)} ms: ${(budget - calls).toFixed(2)} ms beside its two calls.\n`
          : `At 0.4 a product read would have ${budget.toFixed(2)} ms, less than its two calls alone: with nothing else spent, the ratio would be ${(raw.cpuMsPerRequest / calls).toFixed(2)}.\n`)
      );
    } finally {
      await bench.stop();
    }
  },
};
