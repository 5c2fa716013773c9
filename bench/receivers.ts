/**
 * What the delivery-latency sections set up alike: a key per loopback receiver on the bench's
 * store, three of them bad and one healthy (webhooks.ts, import-webhooks.ts), and the order each
 * `orders place` sends (those two and destinations.ts).
 */
import { BAD_AND_HEALTHY, receiver } from '#fixtures/bad-receivers.ts';
import type { BenchStack } from './bench-stack.ts';

export interface Receivers {
  /** The healthy receiver's latencies, one per delivery: arrival minus the event's timestamp. */
  readonly latencies: number[];
  close(): Promise<void>;
}

/** One key with `orders:read` per receiver of BAD_AND_HEALTHY (hangs, drips, answers 500, healthy). */
export async function startReceivers(bench: BenchStack): Promise<Receivers> {
  const latencies: number[] = [];
  const servers = await Promise.all(BAD_AND_HEALTHY.map((k) => receiver(k, (_, ms) => latencies.push(ms))));
  const close = async () => void (await Promise.all(servers.map((s) => s.close())));
  try {
    for (const [i, r] of servers.entries()) {
      await bench.admin('keys create', {
        store: bench.storeId,
        name: `receiver ${i}`,
        abilities: 'orders:read',
        webhook_url: r.url,
      });
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { latencies, close };
}

/** A pending order of one line (gift wrap, 2.50), as `orders place --file` takes it. */
export const orderFile = (reference: string) => ({
  reference,
  status: 'pending',
  currency_code: 'EUR',
  customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: null },
  items: [{ sku: null, name: 'Gift wrap', quantity: 1, price: 250 }],
  shipping_total: 0,
  discount_total: 0,
});

/**
 * One warm-up order (module loading, JIT), not counted: placed, awaited at the healthy receiver
 * for 60 s at most, then its latency forgotten.
 */
export async function warmUp(bench: BenchStack, receivers: Receivers, reference: string): Promise<void> {
  await bench.admin('orders place', { store: bench.storeId, file: orderFile(reference) });
  for (const deadline = Date.now() + 60_000; receivers.latencies.length < 1 && Date.now() < deadline; )
    await new Promise((r) => setTimeout(r, 50));
  receivers.latencies.length = 0;
}
