/**
 * Webhook latency beside bad neighbours: one store, four keys with webhook URLs on loopback, three
 * of them bad (a receiver that never answers, one that sends headers and then drips a byte every
 * 200 ms, one that answers 500) and one healthy. BENCH_WEBHOOK_EVENTS (default 20) orders are
 * placed through the admin handler, 100 ms apart; the healthy receiver's latency is arrival minus
 * the event's own timestamp (the change), so it covers stream, fan-out, queue and signer.
 */
import { percentile, startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';
import { orderFile, startReceivers, warmUp } from './receivers.ts';

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20);

export const webhooksSection: BenchSection = {
  name: 'webhooks',
  async run() {
    const bench = await startBenchStack({ storeId: 'webhooks', keys: 0 });
    const receivers = await startReceivers(bench);
    const { latencies } = receivers;
    try {
      await warmUp(bench, receivers, 'BENCH-0');
      for (let n = 1; n <= EVENTS; n++) {
        await bench.admin('orders place', { store: bench.storeId, file: orderFile(`BENCH-${n}`) });
        await new Promise((r) => setTimeout(r, 100));
      }
      for (const deadline = Date.now() + 120_000; latencies.length < EVENTS && Date.now() < deadline; )
        await new Promise((r) => setTimeout(r, 50));
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
      await receivers.close();
      await bench.stop();
    }
  },
};
