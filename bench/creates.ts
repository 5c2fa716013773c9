/**
 * Product creates per second on ONE store, with 1, 10 and 50 writers at once (each its own key,
 * each with one request in flight, for BENCH_SECONDS each): new external ids by single PUTs, and
 * by batches of 100. Counts what matters under contention besides speed: refusals (retryable 503s,
 * the whole request or a batch item, which wrote nothing) and any other 5xx (must be 0). Ids come
 * from the guarded sequence while a writer is alone and from reserved blocks after a lost race
 * (docs/catalog-writes.md, "Ids under contention"). Last, one key's first full sync:
 * BENCH_SYNC_BATCHES (default 60) batches of 100 new products one after another, timed whole.
 */
import { startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';
import { resetConfig } from '#shared/config.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WRITERS = [1, 10, 50];
const BATCH = 100;
/** One key's full sync: this many batches of 100 new products, one after another. */
const SYNC_BATCHES = Number(process.env.BENCH_SYNC_BATCHES ?? 60);

type Tally = { created: number; refused: number; other5xx: number; seconds: number };

export const createsSection: BenchSection = {
  name: 'creates',
  async run() {
    // Each writer has a key of its own; the allowance is raised so that speed, not it, is measured
    // (and put back afterwards: the configuration is process-wide, and other sections follow).
    const allowance = process.env.RATE_LIMIT_PER_MINUTE;
    resetConfig();
    const bench = await startBenchStack({
      storeId: 'creates',
      keys: Math.max(...WRITERS),
      env: { RATE_LIMIT_PER_MINUTE: '1000' },
    });
    let serial = 0;
    const send = async (token: string, method: string, path: string, body: unknown) => {
      const res = await fetch(`${bench.stack.baseUrl}${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const single = async (token: string, t: Tally) => {
      const n = ++serial;
      const res = await send(token, 'PUT', `/catalog/products/c-${n}`, {
        name: `Create ${n}`,
        price: 100,
        quantity: 1,
        sku: `C-${n}`,
      });
      if (res.status === 200) t.created++;
      else if (res.status === 503 && res.body?.code === 'service_unavailable') t.refused++;
      else if (res.status >= 500) t.other5xx++;
      else throw new Error(`PUT answered ${res.status}: ${JSON.stringify(res.body)}`);
    };
    const batch = async (token: string, t: Tally) => {
      const items = Array.from({ length: BATCH }, () => {
        const n = ++serial;
        return { external_id: `c-${n}`, name: `Create ${n}`, price: 100, quantity: 1, sku: `C-${n}` };
      });
      const res = await send(token, 'POST', '/catalog/products/batch', { items });
      if (res.status >= 500) return void (res.status === 503 ? (t.refused += BATCH) : (t.other5xx += BATCH));
      if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${JSON.stringify(res.body)}`);
      for (const item of res.body.data as { status: number; error: { code: string } | null }[]) {
        if (item.status === 200) t.created++;
        else if (item.status === 503 && item.error?.code === 'service_unavailable') t.refused++;
        else t.other5xx++;
      }
    };
    const measure = async (writers: number, one: (token: string, t: Tally) => Promise<void>): Promise<Tally> => {
      const t: Tally = { created: 0, refused: 0, other5xx: 0, seconds: 0 };
      const started = performance.now();
      const until = started + SECONDS * 1000;
      await Promise.all(
        bench.tokens.slice(0, writers).map(async (token) => {
          while (performance.now() < until) await one(token, t);
        }),
      );
      t.seconds = (performance.now() - started) / 1000;
      return t;
    };
    try {
      // DynamoDB Local's JVM and this process's JIT warm up first.
      await measure(1, single);
      const rows: string[] = [];
      for (const [kind, one] of [
        ['PUT /catalog/products/{external_id}', single],
        [`POST /catalog/products/batch (${BATCH} new)`, batch],
      ] as const) {
        for (const writers of WRITERS) {
          const t = await measure(writers, one);
          rows.push(
            `| ${kind} | ${writers} | ${(t.created / t.seconds).toFixed(0)} | ${t.created} | ${t.refused} | ${t.other5xx} | ${t.seconds.toFixed(1)} |\n`,
          );
        }
      }
      // One key's first full sync (a CRM's 6,000 products): batches one after another, the next
      // sent when the last answered, as its allowance (60 requests a minute) lets it.
      const sync: Tally = { created: 0, refused: 0, other5xx: 0, seconds: 0 };
      const syncStarted = performance.now();
      for (let i = 0; i < SYNC_BATCHES; i++) await batch(bench.tokens[0] as string, sync);
      sync.seconds = (performance.now() - syncStarted) / 1000;
      return (
        '## Product creates under contention\n\n' +
        `New products on one store, each writer its own key with one request in flight, for ${SECONDS} s (the requests in flight then finish). ` +
        'Refused: retryable 503 `service_unavailable` (request or batch item) that wrote nothing; other 5xx must be 0.\n\n' +
        '| request | writers | creates/s | created | refused | other 5xx | seconds |\n|---|---|---|---|---|---|---|\n' +
        rows.join('') +
        `\nOne key, ${SYNC_BATCHES} batches of ${BATCH} new products one after another: ${sync.seconds.toFixed(1)} s ` +
        `(${(sync.created / sync.seconds).toFixed(0)} creates/s, ${sync.created} created, ${sync.refused} refused, ${sync.other5xx} other 5xx).\n`
      );
    } finally {
      await bench.stop();
      if (allowance === undefined) delete process.env.RATE_LIMIT_PER_MINUTE;
      else process.env.RATE_LIMIT_PER_MINUTE = allowance;
      resetConfig();
    }
  },
};
