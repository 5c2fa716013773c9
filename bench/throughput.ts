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
 * A product read is two round trips (the authorizer's UpdateItem, then the GetItem), so 0.5 would be
 * the ratio's ceiling if DynamoDB Local alone were the bottleneck. On a small machine it is not:
 * the stack, DynamoDB Local's JVM and the load client share the cores, so the section measures
 * the CPU each of them spends per request (the JVM's from /proc) and states the bound the
 * machine's cores set. To tell the SDK's part of the stack's CPU from the rest, each round also
 * runs the authorizer's own call alone (`authenticate`, shared/db/key/auth.repo.ts: the
 * conditional UpdateItem that resolves a key and counts it against its rate limit). Last, the
 * authorizer's write runs on copies of the run's token items, as they are, without their rate-limit
 * ring and with the ring at its largest, which says what the item's size costs.
 * The raw GetItem calls are made in this process, by the stack's own client; the HTTP requests
 * come from bench/load-client.mjs in a process of its own, as a client of the API would.
 * BENCH_CPU_PROFILE=file writes a V8 CPU profile of the stack during the HTTP run.
 */
import { newContext } from '#shared/context.ts';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '#db/core/client.ts';
import { keys as dbKeys } from '#db/keys.ts';
import { authenticate } from '#app/authenticate.ts';
import { hashToken } from '#domain/key/api-key.ts';
import { config } from '#shared/config.ts';
import { startBenchStack } from './bench-stack.ts';
import {
  CONCURRENCY,
  cpuMs,
  MAX_FAILED_SHARE,
  processCpuMs,
  type Run,
  SECONDS,
  saturate,
  served,
  storeCpu,
  WARM_UP_SECONDS,
} from './saturate.ts';
import { tokenItemSizes } from './token-item-size.ts';
import { seedProducts } from './seed.ts';
import type { BenchSection } from './section.ts';

const ROUNDS = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 3);
const PRODUCTS = 200;
/**
 * Keys and an allowance that let the load client saturate the stack, not the rate limit: 300 keys at
 * RATE_LIMIT_PER_MINUTE's most (1,000) admit 5,000 requests a second, several times what the stack
 * serves here. At the default 60 they admitted 5 a second in all and the run measured 429s.
 */
const KEYS = 300;
const ALLOWANCE_PER_MINUTE = 1000;

/** Runs bench/load-client.mjs against `urls` and resolves with what it counted. */
function loadClient(args: {
  urls: string[];
  tokens: string[];
  seconds: number;
}): Promise<{ done: number; failed: number; seconds: number; cpuMs: number }> {
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
    const bench = await startBenchStack({
      storeId: 'throughput',
      keys: KEYS,
      streamConsumers: false,
      env: { RATE_LIMIT_PER_MINUTE: String(ALLOWANCE_PER_MINUTE) },
    });
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
        (
          await authenticate(
            newContext(),
            tokenHashes[i % tokenHashes.length] as string,
            Date.now(),
            config().rateLimitPerMinute,
          )
        ).ok;
      const urls = ids.map((id) => `${bench.stack.baseUrl}/products/${id}`);
      const storePid = bench.stack.storePid;
      const throughGateway = async (): Promise<Run> => {
        const store = processCpuMs(storePid);
        const cpu = process.cpuUsage();
        const run = await loadClient({ urls, tokens: bench.tokens, seconds: SECONDS });
        // Only the 200s are product reads; `served` fails the section past 1% of other answers.
        const ok = served('GET /products/{id} through the local gateway', run);
        return {
          perSecond: ok.perSecond,
          failed: run.failed,
          cpuMsPerRequest: cpuMs(cpu) / ok.served,
          ...storeCpu(storePid, store, ok.served),
          clientCpuMsPerRequest: run.cpuMs / ok.served,
        };
      };
      // DynamoDB Local's JVM and this process's JIT warm up first.
      await saturate(getItem, WARM_UP_SECONDS);
      await loadClient({ urls, tokens: bench.tokens, seconds: WARM_UP_SECONDS });
      await saturate(authorize, WARM_UP_SECONDS / 2);
      const rounds: Array<{ raw: Run; auth: Run; gateway: Run; ratio: number }> = [];
      for (let round = 0; round < ROUNDS; round++) {
        const raw = await saturate(getItem, SECONDS, storePid);
        const auth = await saturate(authorize, SECONDS, storePid);
        const gateway =
          round === 0 ? await profiled(process.env.BENCH_CPU_PROFILE, throughGateway) : await throughGateway();
        rounds.push({ raw, auth, gateway, ratio: gateway.perSecond / raw.perSecond });
      }
      const { raw, auth, gateway, ratio } = [...rounds].sort((a, b) => a.ratio - b.ratio)[
        Math.floor(rounds.length / 2)
      ] as (typeof rounds)[number];
      const tokenItems = await tokenItemSizes(tokenHashes, storePid);
      const rest = gateway.cpuMsPerRequest - raw.cpuMsPerRequest - auth.cpuMsPerRequest;
      const share = (ms: number) => `${((ms / gateway.cpuMsPerRequest) * 100).toFixed(0)}%`;
      const calls = raw.cpuMsPerRequest + auth.cpuMsPerRequest;
      const ms = (n: number | undefined) => (n === undefined ? 'n/a' : n.toFixed(2));
      const row = (name: string, r: Run) =>
        `| ${name} | ${r.perSecond.toFixed(0)}${r.failed ? ` (${r.failed} failed)` : ''} | ${ms(r.cpuMsPerRequest)} | ${ms(r.storeCpuMsPerRequest)} | ${ms(r.clientCpuMsPerRequest)} |\n`;
      const cores = availableParallelism();
      const machine = (r: Run) => r.cpuMsPerRequest + (r.storeCpuMsPerRequest ?? 0) + (r.clientCpuMsPerRequest ?? 0);
      return (
        '## Product-read throughput\n\n' +
        `${CONCURRENCY} requests in flight for ${SECONDS} s each against the stack's DynamoDB Local. CPU per request is measured in three processes: the stack (gateway, ` +
        `authorizer, handlers, SDK), DynamoDB Local's JVM (from /proc) and, for the gateway runs, the load client. ` +
        `Requests/s and CPU per request count successful answers only (a 200, an item found, a key admitted), and the section fails when more than ${MAX_FAILED_SHARE * 100}% of a run's requests fail; ` +
        `its ${KEYS} keys may each send ${ALLOWANCE_PER_MINUTE} requests a minute, so the rate limit refuses none. ` +
        `${ROUNDS} rounds, each a raw GetItem run, a raw authorizer run, then a gateway run; the rows are the round with the median ratio ` +
        `(each round's raw : gateway requests/s: ${rounds.map((r) => `${r.raw.perSecond.toFixed(0)} : ${r.gateway.perSecond.toFixed(0)} = ${r.ratio.toFixed(2)}`).join('; ')}). ` +
        `Both paths are first run for ${WARM_UP_SECONDS} s: DynamoDB Local's JVM speeds up for tens of seconds, and the raw path (one call per request) gains more from it than the gateway path, so a ratio taken against a cold JVM reads high.\n\n` +
        '| measurement | requests/s | stack CPU ms/request | DynamoDB Local CPU ms/request | client CPU ms/request |\n|---|---|---|---|---|\n' +
        row("raw GetItem of a product (consistent, the stack's SDK client)", raw) +
        row("raw authorizer call (authenticate: the key's conditional UpdateItem)", auth) +
        row('GET /products/{id} through the local gateway (client in its own process)', gateway) +
        `| **ratio** GET /products/{id} : raw GetItem | ${ratio.toFixed(2)} | | | |\n\n` +
        `**The stack's CPU.** A product read's two DynamoDB calls made raw take ${raw.cpuMsPerRequest.toFixed(2)} + ${auth.cpuMsPerRequest.toFixed(2)} ms of it (${share(calls)}); ` +
        `the remaining ${rest.toFixed(2)} ms (${share(rest)}) is HTTP in and out, the gateway emulation (emulation/local), the authorizer and handler chains and their logging and metrics. ` +
        'The raw authorizer run is not CPU-bound in the stack (DynamoDB Local answers it more slowly), and a process that waits between responses spends more CPU on each, so its figure is an upper bound.\n\n' +
        (gateway.storeCpuMsPerRequest === undefined
          ? ''
          : `**The machine's CPU.** A raw GetItem costs ${machine(raw).toFixed(2)} ms of CPU in all; a product read costs ${machine(gateway).toFixed(2)} ms: ` +
            `${gateway.cpuMsPerRequest.toFixed(2)} in the stack, ${ms(gateway.storeCpuMsPerRequest)} in DynamoDB Local and ${ms(gateway.clientCpuMsPerRequest)} in the client. ` +
            `On ${cores} cores that is at most ${((cores * 1000) / machine(gateway)).toFixed(0)} product reads a second (measured: ${gateway.perSecond.toFixed(0)}): ` +
            `the three processes share the cores, so the ratio follows the machine's CPU per request as much as the stack's (${machine(raw).toFixed(2)} / ${machine(gateway).toFixed(2)} = ${(machine(raw) / machine(gateway)).toFixed(2)}). ` +
            `DynamoDB Local spends ${ms(auth.storeCpuMsPerRequest)} ms on the authorizer's UpdateItem against ${ms(raw.storeCpuMsPerRequest)} on a product GetItem.\n\n`) +
        tokenItems
      );
    } finally {
      await bench.stop();
    }
  },
};
