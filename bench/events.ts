/**
 * The event log's cost: what each event adds to the write that raises it, and what GET /events
 * costs. Events are Put in the write's own transaction, so a product PUT's round trips are those
 * it had before; the units are counted by AWS's billing rules (bench/billing-units.ts) on the
 * event items as they were stored (a transaction bills 2 WRU per KB of each item). Numbering
 * happens after the commit, off the request path, in one transaction per stream batch of a store
 * (the counter, then an update of each outbox item and a Put of its log entry).
 */
import { newContext } from '#shared/context.ts';
import { storeItems } from '#fixtures/content.ts';
import { lastSequence } from '#db/event/log.repo.ts';
import { itemSize } from './billing-units.ts';
import { percentile, startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';

const WRITES = Number(process.env.BENCH_EVENT_WRITES ?? 50);
const READS = Number(process.env.BENCH_EVENT_READS ?? 20);
const KEYS = 10;

const txUnits = (bytes: number) => 2 * Math.max(1, Math.ceil(bytes / 1024));
const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);

export const eventsSection: BenchSection = {
  name: 'events',
  async run() {
    // Request n uses key n mod KEYS, so no key nears its 60 a minute.
    const bench = await startBenchStack({ storeId: 'bench-events', keys: KEYS });
    let n = 0;
    try {
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(bench.stack.baseUrl + path, {
          method,
          headers: { Authorization: `Bearer ${bench.tokens[n++ % KEYS]}`, 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        await res.arrayBuffer();
        if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`);
      };
      bench.resetSamples();
      for (let i = 0; i < WRITES; i++)
        await call('PUT', `/catalog/products/ev-${i}`, { name: `Event bench ${i}`, price: 1000 + i, sku: `EV-${i}` });
      const puts = bench.samples();
      while ((await lastSequence(newContext(), bench.storeId)) < WRITES) await new Promise((r) => setTimeout(r, 200));
      const outbox = (await storeItems(bench.storeId, 'EVENT#')).map(itemSize);
      const log = (await storeItems(bench.storeId, 'LOG#')).map(itemSize);

      bench.resetSamples();
      for (let i = 0; i < READS; i++) await call('GET', `/events?cursor=${i}&limit=50`);
      const reads = bench.samples();
      const calls = (s: { calls: number }[]) => mean(s.map((x) => x.calls)).toFixed(2);
      const common = (s: { ops: string }[]) => {
        const n = new Map<string, number>();
        for (const x of s) n.set(x.ops, (n.get(x.ops) ?? 0) + 1);
        return [...n].sort((a, b) => b[1] - a[1])[0]?.[0] ?? '';
      };
      return (
        `## Event log\n\n` +
        `${WRITES} product creates by PUT (one \`product.created\` each), then ${READS} \`GET /events?limit=50\`. ` +
        `Units by AWS's billing rules on the stored items: an item in a transaction is 2 WRU per KB.\n\n` +
        '| what | figure |\n|---|---|\n' +
        `| PUT /catalog/products/{xid} (create): DynamoDB round trips | ${calls(puts)} (${common(puts)}) |\n` +
        `| event item in the write's transaction: mean size | ${mean(outbox).toFixed(0)} B (max ${Math.max(...outbox)} B) |\n` +
        `| WRU the event adds to the write | ${mean(outbox.map(txUnits)).toFixed(2)} (max ${Math.max(...outbox.map(txUnits))}) |\n` +
        `| numbering, after the commit (log entry Put + outbox update, per event) | ${(mean(log.map(txUnits)) + mean(outbox.map(txUnits))).toFixed(2)} WRU, plus 2 WRU for the counter per stream batch (up to 49 events) |\n` +
        `| GET /events?limit=50: DynamoDB round trips | ${calls(reads)} (${common(reads)}) |\n` +
        `| GET /events p50 / p95 (DynamoDB Local, this machine) | ${percentile(
          reads.map((x) => x.ms),
          50,
        ).toFixed(1)} / ${percentile(
          reads.map((x) => x.ms),
          95,
        ).toFixed(1)} ms |\n`
      );
    } finally {
      await bench.stop();
    }
  },
};
