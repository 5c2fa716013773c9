/**
 * Order webhooks during a catalog import of the same store (docs/webhooks.md, "Latency during an
 * import"): ten keys post BENCH_IMPORT_PRODUCTS (default 10,000) new products in batches of 100,
 * ten batches in flight at once, while three receivers hang, drip and answer 500 on a 1 s retry
 * schedule and a healthy one takes the store's order events. Right after the first batches are
 * in, BENCH_IMPORT_ORDERS (default 20) orders are placed, 250 ms apart; the healthy receiver's
 * latency is arrival minus the event's own timestamp (stream, numbering, fan-out, queue, signer).
 * Also printed: how long after the import's last batch answered the store's last event was
 * numbered (the stream's backlog the import left).
 */
import { percentile, startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';
import { orderFile, startReceivers, warmUp } from './receivers.ts';
import { resetConfig } from '#shared/config.ts';

const PRODUCTS = Number(process.env.BENCH_IMPORT_PRODUCTS ?? 10_000);
const ORDERS = Number(process.env.BENCH_IMPORT_ORDERS ?? 20);
const WRITERS = 10;
const BATCH = 100;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const importWebhooksSection: BenchSection = {
  name: 'import-webhooks',
  async run() {
    // The stack's settings are process-wide (other sections follow): put them back at the end.
    const saved = {
      RATE_LIMIT_PER_MINUTE: process.env.RATE_LIMIT_PER_MINUTE,
      WEBHOOK_RETRY_SCHEDULE: process.env.WEBHOOK_RETRY_SCHEDULE,
    };
    const bench = await startBenchStack({
      storeId: 'import',
      keys: WRITERS,
      env: { RATE_LIMIT_PER_MINUTE: '1000', WEBHOOK_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1' },
    });
    const receivers = await startReceivers(bench);
    const { latencies } = receivers;
    try {
      await warmUp(bench, receivers, 'IMPORT-0');

      let serial = 0;
      let batchesDone = 0;
      let created = 0;
      let refused = 0;
      let batchRetries = 0;
      const importer = async (token: string) => {
        while (serial < PRODUCTS) {
          const items = Array.from({ length: Math.min(BATCH, PRODUCTS - serial) }, () => {
            const n = ++serial;
            return { external_id: `i-${n}`, name: `Import ${n}`, price: 100, quantity: 1, sku: `I-${n}` };
          });
          // A whole batch refused with a 503 (the data store timed out under load) is sent again
          // after its Retry-After, as a client would; the items are upserts by external id.
          let res: Response;
          for (;;) {
            res = await fetch(`${bench.stack.baseUrl}/catalog/products/batch`, {
              method: 'POST',
              headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
              body: JSON.stringify({ items }),
            });
            if (res.status !== 503) break;
            await res.text();
            batchRetries++;
            await sleep(1000 * Number(res.headers.get('retry-after') ?? 2));
          }
          if (res.status !== 200) throw new Error(`batch answered ${res.status}: ${await res.text()}`);
          // An item refused under contention (a retryable 503) wrote nothing and raised no event.
          for (const item of ((await res.json()) as { data: { status: number }[] }).data)
            if (item.status === 200) created++;
            else refused++;
          batchesDone++;
        }
      };
      const started = Date.now();
      const imported = Promise.all(bench.tokens.map(importer)).then(() => Date.now());
      // The orders come right after the first batches are in: the stream holds the import ahead of them.
      while (batchesDone < Math.min(WRITERS, Math.ceil(PRODUCTS / BATCH))) await sleep(20);
      for (let n = 1; n <= ORDERS; n++) {
        await bench.admin('orders place', { store: bench.storeId, file: orderFile(`IMPORT-${n}`) });
        await sleep(250);
      }
      const importEnded = await imported;
      // Every product created and order placed raised one event: the backlog is drained when the log holds them all.
      const expected = created + ORDERS + 1;
      let drained = 0;
      let logged = 0;
      let after = 0;
      for (const deadline = Date.now() + 600_000; Date.now() < deadline; ) {
        const page = await bench.admin<{ data: unknown[]; next_after: number | null }>('webhooks events', {
          store: bench.storeId,
          after,
          limit: 100,
        });
        logged += page.data.length;
        after = page.next_after ?? after + page.data.length;
        if (logged >= expected) {
          drained = Date.now();
          break;
        }
        if (page.data.length === 0) await sleep(100);
      }
      for (const deadline = Date.now() + 120_000; latencies.length < ORDERS && Date.now() < deadline; ) await sleep(50);
      const got = latencies.length;
      return (
        '## Order webhooks during a catalog import\n\n' +
        `${PRODUCTS.toLocaleString('en')} new products in batches of ${BATCH}, ${WRITERS} in flight (ten keys); ` +
        `${ORDERS} \`orders place\` 250 ms apart once the first ${WRITERS} batches are in; receivers that hang, ` +
        "drip and answer 500 (1 s retries) beside a healthy one. Latency: arrival minus the event's timestamp. " +
        'Local stack, loopback.\n\n' +
        '| products (refused, retryable) | batches sent again after a 503 | import s | last event numbered after import (s) | healthy deliveries | p50 ms | p95 ms | max ms |\n' +
        '|---|---|---|---|---|---|---|---|\n' +
        `| ${created} (${refused}) | ${batchRetries} | ${((importEnded - started) / 1000).toFixed(1)} | ${drained ? ((drained - importEnded) / 1000).toFixed(1) : 'not within 10 min'} | ` +
        `${got} of ${ORDERS} | ${percentile(latencies, 50).toFixed(0)} | ${percentile(latencies, 95).toFixed(0)} | ` +
        `${Math.max(0, ...latencies).toFixed(0)} |\n`
      );
    } finally {
      await receivers.close();
      await bench.stop();
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      resetConfig();
    }
  },
};
