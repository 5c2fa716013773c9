/**
 * One hot product (docs/catalog-writes.md, "One hot product"): 20 writers PATCH the same product
 * of one key for BENCH_HOT_SECONDS (20 by default), each with one request in flight, each its own
 * field (price, quantity or description, in turn) and a value no other PATCH sends. Reports the
 * latency as the client saw it, applied and refused PATCHes, and the DynamoDB calls of each
 * request (authorizer and handler together, counted by the SDK middleware). Then checks what
 * matters besides speed: every field holds the value of the last PATCH of it that was applied
 * (none lost to a racing writer of another field), and only retryable refusals besides 200.
 *
 * External ids are per key, so the writers share one key; its allowance (1,000 a minute at most)
 * paces them: a writer starts its next PATCH when the previous one has answered and no sooner
 * than PACE_MS after it started, so the key stays within its allowance and nothing is 429; a
 * refused one waits the Retry-After it was given, as a client does.
 */
import { percentile, startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';
import { resetConfig } from '#shared/config.ts';

const SECONDS = Number(process.env.BENCH_HOT_SECONDS ?? 20);
const WRITERS = Number(process.env.BENCH_HOT_WRITERS ?? 20);
const ALLOWANCE_PER_MINUTE = 1000;
/** The gap between one writer's starts that keeps the 20 of them within the key's allowance. */
const PACE_MS = Math.ceil((WRITERS * 60_000) / ALLOWANCE_PER_MINUTE);
const FIELDS = ['price', 'quantity', 'description'] as const;
type Field = (typeof FIELDS)[number];

type Answer = { field: Field; value: number | string; status: number; code?: string; updatedAt?: string; ms: number };

export const hotItemSection: BenchSection = {
  name: 'hot',
  async run() {
    const allowance = process.env.RATE_LIMIT_PER_MINUTE;
    resetConfig();
    const bench = await startBenchStack({
      storeId: 'hot',
      keys: 1,
      env: { RATE_LIMIT_PER_MINUTE: String(ALLOWANCE_PER_MINUTE) },
      streamConsumers: false,
    });
    const token = bench.tokens[0] as string;
    const path = '/catalog/products/hot-1';
    const send = async (method: string, body: unknown) => {
      const res = await fetch(`${bench.stack.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return {
        status: res.status,
        retryAfter: Number(res.headers.get('retry-after') ?? 0),
        body: (await res.json()) as any,
      };
    };
    try {
      const created = await send('PUT', { name: 'Hot item', price: 100, quantity: 0, sku: 'HOT-1' });
      if (created.status !== 200) throw new Error(`PUT answered ${created.status}`);
      // DynamoDB Local's JVM and this process's JIT warm up first, on the same product.
      for (let i = 0; i < 20; i++) await send('PATCH', { description: `warm ${i}` });
      await new Promise((r) => setTimeout(r, PACE_MS));
      bench.resetSamples();

      let serial = 0;
      const answers: Answer[] = [];
      const started = performance.now();
      const until = started + SECONDS * 1000;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          while (performance.now() < until) {
            const n = ++serial;
            const field = FIELDS[n % FIELDS.length] as Field;
            const value = field === 'description' ? `patch ${n}` : 1000 + n;
            const t0 = performance.now();
            const res = await send('PATCH', { [field]: value });
            const ms = performance.now() - t0;
            answers.push({
              field,
              value,
              status: res.status,
              code: res.body?.code,
              updatedAt: res.body?.data?.updated_at,
              ms,
            });
            // A refused writer waits its Retry-After, as a client does.
            const wait = Math.max(PACE_MS - ms, res.status === 429 ? res.retryAfter * 1000 : 0);
            if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          }
        }),
      );
      const seconds = (performance.now() - started) / 1000;
      const samples = bench.samples();

      const applied = answers.filter((a) => a.status === 200);
      const refused = answers.filter((a) => a.status === 429 && a.code === 'resource_busy');
      const other = answers.length - applied.length - refused.length;
      const stored = await readBack(bench.stack.baseUrl, token, path);
      let lost = 0;
      for (const field of FIELDS) {
        const last = applied
          .filter((a) => a.field === field)
          .sort((a, b) => (a.updatedAt ?? '').localeCompare(b.updatedAt ?? ''))
          .at(-1);
        if (last && stored[field] !== last.value) lost++;
      }

      const ms = answers.map((a) => a.ms);
      const calls = samples.map((s) => s.calls);
      const refusedMs = refused.map((a) => a.ms);
      const refusedCalls = samples.filter((s) => s.status === 429).map((s) => s.calls);
      const fmt = (n: number) => n.toFixed(0);
      const spread = (xs: number[]) =>
        xs.length ? `${fmt(percentile(xs, 50))} / ${fmt(percentile(xs, 99))} / ${fmt(Math.max(...xs))}` : '–';
      return (
        '## One hot product\n\n' +
        `${WRITERS} writers PATCH one product of one key for ${SECONDS} s, each its own field in turn (price, quantity, description) ` +
        `with one request in flight, a writer's PATCHes at least ${PACE_MS} ms apart (the key's ${ALLOWANCE_PER_MINUTE} a minute shared by ${WRITERS}), a refused one's after its Retry-After. ` +
        "Latency as the client saw it; DynamoDB calls per request, the authorizer's included. Refused: retryable 429 `resource_busy`, nothing written. " +
        'Fields lost: a field whose stored value is not that of the last applied PATCH of it (must be 0). ' +
        'The refused PATCHes alone: their latency and calls (p50 / p99 / max).\n\n' +
        '| PATCHes | applied | refused | other | p50 ms | p99 ms | max ms | calls p50 | calls p99 | calls max | refused ms | refused calls | fields lost | seconds |\n' +
        '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n' +
        `| ${answers.length} | ${applied.length} | ${refused.length} | ${other} | ${fmt(percentile(ms, 50))} | ${fmt(percentile(ms, 99))} | ${fmt(Math.max(...ms))} | ` +
        `${percentile(calls, 50)} | ${percentile(calls, 99)} | ${Math.max(...calls)} | ${spread(refusedMs)} | ${spread(refusedCalls)} | ${lost} | ${seconds.toFixed(1)} |\n`
      );
    } finally {
      await bench.stop();
      if (allowance === undefined) delete process.env.RATE_LIMIT_PER_MINUTE;
      else process.env.RATE_LIMIT_PER_MINUTE = allowance;
      resetConfig();
    }
  },
};

/** The product's write fields as stored, read back once the writers are done. */
async function readBack(baseUrl: string, token: string, path: string): Promise<Record<Field, unknown>> {
  const res = await fetch(`${baseUrl}${path}`, { headers: { Authorization: `Bearer ${token}` } });
  const body = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`GET answered ${res.status}`);
  return { price: body.data.min_price, quantity: body.data.quantity, description: body.data.description };
}
