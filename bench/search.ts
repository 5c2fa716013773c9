/**
 * filter[name] at catalog sizes: BENCH_SEARCH_SIZES (default 10000,100000) products seeded
 * through the repository layer (16 to a transaction, as the batch endpoint inserts them), the
 * stack's name indexer left to take them in, then a rare and a common needle searched
 * BENCH_SEARCH_REQUESTS times (default 5) each: round trips, RCU (DynamoDB Local reports Query
 * units by the bytes read) and latency per request. The store grows from one size to the next.
 */
import { percentile, startBenchStack } from './bench-stack.ts';
import { seedProducts } from './seed.ts';
import type { BenchSection } from './section.ts';

const SIZES = (process.env.BENCH_SEARCH_SIZES ?? '10000,100000').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_SEARCH_REQUESTS ?? 5);
/** One product in 5,000 is a zebra; one in 8 is walnut (bench/seed.ts names). */
const NEEDLES = [
  { label: 'rare', needle: 'zebra' },
  { label: 'common', needle: 'walnut' },
  { label: 'one letter', needle: 'z' },
];

export const searchSection: BenchSection = {
  name: 'search',
  async run() {
    const bench = await startBenchStack({ storeId: 'search', keys: 1 });
    try {
      const rows: string[] = [];
      let seeded = 0;
      for (const size of SIZES) {
        const started = performance.now();
        await seedProducts(bench.storeId, size - seeded, { from: seeded + 1, name: (i) => (i % 5000 === 2500 ? `Zebra lamp ${i}` : undefined) });
        const inserted = performance.now();
        await bench.namesIndexed();
        process.stderr.write(
          `bench: search: ${size - seeded} products inserted in ${((inserted - started) / 1000).toFixed(0)} s, indexed ${((performance.now() - inserted) / 1000).toFixed(0)} s after\n`,
        );
        seeded = size;
        for (const { label, needle } of NEEDLES) {
          bench.resetSamples();
          let total = 0;
          for (let i = 0; i <= REQUESTS; i++) {
            if (i === 1) bench.resetSamples(); // the first request warms the gateway's path
            const res = await fetch(`${bench.stack.baseUrl}/products?filter%5Bname%5D=${needle}`, { headers: { Authorization: `Bearer ${bench.tokens[0]}` } });
            total = ((await res.json()) as { total: number }).total;
          }
          const samples = bench.samples();
          const ms = samples.map((s) => s.ms);
          rows.push(`| ${size} | ${label} \`${needle}\` | ${total} | ${samples[0]?.calls ?? 0} | ${samples[0]?.rcu ?? 0} | ${percentile(ms, 50).toFixed(1)} |`);
        }
      }
      return (
        '## filter[name] by catalog size\n\n' +
        `Products named \`<word> item <i>\` (one in 8 \`Walnut …\`, one in 5,000 \`Zebra lamp <i>\`), seeded through the repository ` +
        `layer and indexed by the stack's name indexer before measuring; ${REQUESTS} requests per row, one key, warm. Round trips include the ` +
        `authorizer's UpdateItem and the page's BatchGetItem (15 products); RCU are DynamoDB Local's, by bytes read.\n\n` +
        '| products | needle | matches | DynamoDB calls | RCU | p50 ms |\n|---|---|---|---|---|---|\n' +
        rows.join('\n') +
        '\n'
      );
    } finally {
      await bench.stop();
    }
  },
};
