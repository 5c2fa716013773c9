/**
 * filter[name] at catalog sizes: BENCH_SEARCH_SIZES (default 10000,100000; the last is the
 * catalog `products reindex-names` is then run on) products seeded
 * through the repository layer (16 to a transaction, as the batch endpoint inserts them), the
 * stack's name indexer left to take them in, then a rare and a common needle searched
 * BENCH_SEARCH_REQUESTS times (default 5) each: round trips, RCU (DynamoDB Local reports Query
 * units by the bytes read) and latency per request. The store grows from one size to the next.
 */
import { percentile, startBenchStack } from './bench-stack.ts';
import { seedProducts } from './seed.ts';
import type { BenchSection } from './section.ts';
import { productIdsByName, SEARCH_READ_BUDGET_RCU } from '#db/name-index/search.repo.ts';
import { newContext } from '#shared/context.ts';

type Bench = Awaited<ReturnType<typeof startBenchStack>>;

/**
 * The search's own reads (pending entries and postings), the figure the budget bounds: the same
 * repository call the handler makes, in this process, counted by the same SDK middleware.
 */
async function searchUnits(storeId: string, needle: string): Promise<number> {
  const ctx = newContext();
  await productIdsByName(ctx, storeId, needle).catch(() => undefined);
  return ctx.stats.rcu;
}

/** One row: the needle searched `requests` times after a warm-up request (the first of a key reads its token). */
async function measure(
  bench: Bench,
  size: string,
  label: string,
  needle: string,
  requests = REQUESTS,
): Promise<string> {
  let total: number | string = '';
  let status = 0;
  for (let i = 0; i <= requests; i++) {
    if (i === 1) bench.resetSamples();
    const res = await fetch(`${bench.stack.baseUrl}/products?filter%5Bname%5D=${needle}`, {
      headers: { Authorization: `Bearer ${bench.tokens[0]}` },
    });
    status = res.status;
    const body = (await res.json()) as { total?: number; code?: string };
    total = body.total ?? body.code ?? '';
  }
  const samples = bench.samples();
  const ms = samples.map((s) => s.ms);
  const rcu = Math.max(0, ...samples.map((s) => s.rcu));
  const own = await searchUnits(bench.storeId, needle);
  const within = own <= SEARCH_READ_BUDGET_RCU ? 'yes' : '**NO**';
  const row = `| ${size} | ${label} \`${needle}\` | ${status} | ${total} | ${samples[0]?.calls ?? 0} | ${own} | ${within} | ${rcu} | ${percentile(ms, 50).toFixed(1)} |`;
  // As it is measured: indexing 100,000 names takes long on a busy machine, and a run cut short keeps its rows.
  process.stderr.write(`bench: search: ${row}\n`);
  return row;
}

const SIZES = (process.env.BENCH_SEARCH_SIZES ?? '10000,100000').split(',').map(Number);
const REQUESTS = Number(process.env.BENCH_SEARCH_REQUESTS ?? 5);
/** One product in 5,000 is a zebra; one in 8 is walnut (bench/seed.ts names). */
const NEEDLES = [
  { label: 'rare', needle: 'zebra' },
  { label: 'common', needle: 'walnut' },
  { label: 'one letter', needle: 'z' },
  { label: 'two letters', needle: 'ze' },
  { label: 'two letters', needle: 'wa' },
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
        await seedProducts(bench.storeId, size - seeded, {
          from: seeded + 1,
          name: (i) => (i % 5000 === 2500 ? `Zebra lamp ${i}` : undefined),
        });
        const inserted = performance.now();
        await bench.namesIndexed();
        process.stderr.write(
          `bench: search: ${size - seeded} products inserted in ${((inserted - started) / 1000).toFixed(0)} s, indexed ${((performance.now() - inserted) / 1000).toFixed(0)} s after\n`,
        );
        seeded = size;
        for (const { label, needle } of NEEDLES) rows.push(await measure(bench, `${size}`, label, needle));
      }
      // Every name pending again, as `products reindex-names` leaves them: searched while the
      // indexer takes them in, and once it has.
      const reindexed = await bench.admin<{ products: number }>('products reindex-names', { store: bench.storeId });
      rows.push(await measure(bench, `${seeded}, reindexing`, 'rare', 'zebra', 1));
      await bench.namesIndexed();
      for (const { label, needle } of NEEDLES)
        rows.push(await measure(bench, `${seeded}, after reindex of ${reindexed.products}`, label, needle));
      return (
        '## filter[name] by catalog size\n\n' +
        `Products named \`<word> item <i>\` (one in 8 \`Walnut …\`, one in 5,000 \`Zebra lamp <i>\`), inserted through the repository ` +
        `layer (16 to a transaction with their pending names, as the batch endpoint inserts them) and indexed by the stack's name indexer ` +
        `before measuring; ${REQUESTS} requests per row, one key, warm. Sizes: \`BENCH_SEARCH_SIZES=${SIZES.join(',')}\`. RCU are DynamoDB ` +
        `Local's, by bytes read, strongly consistent.\n\n` +
        `Search read budget: ${SEARCH_READ_BUDGET_RCU} RCU per search. "search RCU" is what the search itself read (pending entries and ` +
        `postings: the repository call the handler makes, counted by the same SDK middleware); "request RCU" is the whole request's, ` +
        `the authorizer's UpdateItem and the page's BatchGetItem (up to 15 products) included. 422 is \`filter_too_broad\`; 503 is the ` +
        `pending names of a reindex not yet taken in.\n\n` +
        '| products | needle | status | matches | DynamoDB calls | search RCU | within budget | request RCU | p50 ms |\n|---|---|---|---|---|---|---|---|---|\n' +
        rows.join('\n') +
        '\n'
      );
    } finally {
      await bench.stop();
    }
  },
};
