/**
 * Webhook latency beside bad neighbours: one store, four keys with webhook URLs on loopback, three
 * of them bad (a receiver that never answers, one that sends headers and then drips a byte every
 * 200 ms, one that answers 500) and one healthy. BENCH_WEBHOOK_EVENTS (default 20) orders are
 * placed through the admin handler, 100 ms apart; the healthy receiver's latency is arrival minus
 * the event's own timestamp (the change), so it covers stream, fan-out, queue and signer.
 */
import { percentile, startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';
import { BAD_AND_HEALTHY, receiver } from '#fixtures/bad-receivers.ts';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20);

export const webhooksSection: BenchSection = {
  name: 'webhooks',
  async run() {
    const bench = await startBenchStack({ storeId: 'webhooks', keys: 0 });
    const latencies: number[] = [];
    const servers = await Promise.all(BAD_AND_HEALTHY.map((k) => receiver(k, (_, ms) => latencies.push(ms))));
    try {
      for (const [i, r] of servers.entries()) {
        await bench.admin('keys create', {
          store: bench.storeId,
          name: `receiver ${i}`,
          abilities: 'orders:read',
          webhook_url: r.url,
        });
      }
      const file = (n: number) => ({
        reference: `BENCH-${n}`,
        status: 'pending',
        currency_code: 'EUR',
        customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: null },
        items: [{ sku: null, name: 'Gift wrap', quantity: 1, price: 250 }],
        shipping_total: 0,
        discount_total: 0,
      });
      // One warm-up order (module loading, JIT), not counted.
      await bench.admin('orders place', { store: bench.storeId, file: file(0) });
      const deadline = Date.now() + 60_000;
      while (latencies.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      latencies.length = 0;
      for (let n = 1; n <= EVENTS; n++) {
        await bench.admin('orders place', { store: bench.storeId, file: file(n) });
        await new Promise((r) => setTimeout(r, 100));
      }
      while (latencies.length < EVENTS && Date.now() < deadline + 120_000) await new Promise((r) => setTimeout(r, 50));
      const got = latencies.length;
      return (
        '## Webhook latency beside bad neighbours\n\n' +
        `One store, four keys: receivers that hang, drip (headers, then a byte every 200 ms), answer 500, and one healthy; ` +
        `${EVENTS} \`orders place\` 100 ms apart after one warm-up. Latency: the healthy receiver's arrival minus the event's timestamp ` +
        `(stream, fan-out, queue, signer). Local stack, loopback.\n\n` +
        '| healthy deliveries | p50 ms | p95 ms | max ms |\n|---|---|---|---|\n' +
        `| ${got} of ${EVENTS} | ${percentile(latencies, 50).toFixed(0)} | ${percentile(latencies, 95).toFixed(0)} | ${Math.max(0, ...latencies).toFixed(0)} |\n`
      );
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await bench.stop();
    }
  },
};
