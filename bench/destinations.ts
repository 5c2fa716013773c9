/**
 * Delivery latency per destination kind (docs/destinations.md): one store, four keys receiving its
 * order events: a webhook (a healthy loopback receiver), an SQS standard queue, an SQS FIFO queue
 * (ordered: each delivery waits for the one before it) and an EventBridge bus, the queues on the
 * local stack's SQS emulator and the bus on its EventBridge stand-in, each reached through the STS
 * stand-in with the key's role. BENCH_DESTINATION_EVENTS (default 20) orders are placed through the
 * admin handler, 100 ms apart, after one warm-up. Latency is arrival minus the event's own timestamp
 * (the change): the receiver's clock for the webhook, SQS's `SentTimestamp` for the queues, the
 * stand-in's receipt for the bus, so it covers stream, fan-out, queue, signer and the send.
 */
import { CreateQueueCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { percentile, startBenchStack } from './bench-stack.ts';
import type { BenchSection } from './section.ts';
import { orderFile } from './receivers.ts';
import { receiver } from '#fixtures/bad-receivers.ts';

const EVENTS = Number(process.env.BENCH_DESTINATION_EVENTS ?? 20);
const ACCOUNT = '111122223333';

type Kind = 'webhook' | 'sqs' | 'sqs-fifo' | 'eventbridge';

export const destinationsSection: BenchSection = {
  name: 'destinations',
  async run() {
    const bench = await startBenchStack({ storeId: 'destinations', keys: 0 });
    const dest = bench.stack.destinations!;
    const sqs = new SQSClient({
      region: 'us-east-1',
      endpoint: dest.sqsEndpoint,
      credentials: { accessKeyId: 'bench', secretAccessKey: 'bench' },
    });
    const latencies: Record<Kind, Map<string, number>> = {
      webhook: new Map(),
      sqs: new Map(),
      'sqs-fifo': new Map(),
      eventbridge: new Map(),
    };
    const hook = await receiver('healthy', (event, ms) =>
      latencies.webhook.set((event as unknown as { id: string }).id, ms),
    );
    try {
      const key = (name: string) =>
        bench.admin<{ id: number; aws_external_id: string }>('keys create', {
          store: bench.storeId,
          name,
          abilities: 'orders:read',
        });
      const role = (externalId: string, name: string) => {
        const arn = `arn:aws:iam::${ACCOUNT}:role/store-events-${name}`;
        dest.integrator.putRole(arn, {
          Statement: [
            {
              Effect: 'Allow',
              Action: 'sts:AssumeRole',
              Condition: { StringEquals: { 'sts:ExternalId': externalId } },
            },
          ],
        });
        return arn;
      };
      await bench.admin('keys create', {
        store: bench.storeId,
        name: 'webhook',
        abilities: 'orders:read',
        webhook_url: hook.url,
      });
      const queues = {} as Record<'sqs' | 'sqs-fifo', string>;
      for (const kind of ['sqs', 'sqs-fifo'] as const) {
        const k = await key(kind);
        const fifo = kind === 'sqs-fifo';
        const { QueueUrl } = await sqs.send(
          new CreateQueueCommand({
            QueueName: `bench-${kind}${fifo ? '.fifo' : ''}`,
            Attributes: fifo ? { FifoQueue: 'true' } : {},
          }),
        );
        queues[kind] = QueueUrl!;
        await bench.admin('keys set-destination', {
          id: k.id,
          sqs_queue_url: QueueUrl,
          role_arn: role(k.aws_external_id, kind),
        });
      }
      const busArn = `arn:aws:events:us-east-1:${ACCOUNT}:event-bus/bench`;
      dest.integrator.putBus(busArn);
      const busKey = await key('eventbridge');
      await bench.admin('keys set-destination', {
        id: busKey.id,
        eventbridge_bus_arn: busArn,
        role_arn: role(busKey.aws_external_id, 'eventbridge'),
      });

      const warmUp = new Set<string>();
      /** What arrived so far on the queues and the bus, by the event's own timestamp. */
      const collect = async () => {
        for (const kind of ['sqs', 'sqs-fifo'] as const) {
          for (;;) {
            const out = await sqs.send(
              new ReceiveMessageCommand({
                QueueUrl: queues[kind],
                MaxNumberOfMessages: 10,
                MessageSystemAttributeNames: ['SentTimestamp'],
              }),
            );
            if (!out.Messages?.length) break;
            for (const m of out.Messages) {
              const body = JSON.parse(m.Body!) as { id: string; timestamp: string };
              if (!warmUp.has(body.id))
                latencies[kind].set(body.id, Number(m.Attributes!.SentTimestamp) - Date.parse(body.timestamp));
            }
            // Deleted, as a consumer does: a FIFO group hands out its next message only then.
            await sqs.send(
              new DeleteMessageBatchCommand({
                QueueUrl: queues[kind],
                Entries: out.Messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
              }),
            );
          }
        }
        for (const e of dest.integrator.events(busArn)) {
          const body = JSON.parse(e.detail) as { id: string; timestamp: string };
          if (!warmUp.has(body.id))
            latencies.eventbridge.set(body.id, Date.parse(e.received_at) - Date.parse(body.timestamp));
        }
      };
      const arrived = () => Math.min(...Object.values(latencies).map((m) => m.size));
      const waitFor = async (n: number, ms: number) => {
        const deadline = Date.now() + ms;
        while (arrived() < n && Date.now() < deadline) {
          await collect();
          await new Promise((r) => setTimeout(r, 100));
        }
      };

      // One warm-up order (module loading, JIT, the roles' first sessions), not counted.
      await bench.admin('orders place', { store: bench.storeId, file: orderFile('DEST-0') });
      await waitFor(1, 120_000);
      for (const m of Object.values(latencies)) {
        for (const id of m.keys()) warmUp.add(id);
        m.clear();
      }
      for (let n = 1; n <= EVENTS; n++) {
        await bench.admin('orders place', { store: bench.storeId, file: orderFile(`DEST-${n}`) });
        await new Promise((r) => setTimeout(r, 100));
      }
      await waitFor(EVENTS, 180_000);
      await collect();

      const row = (kind: Kind, what: string) => {
        const xs = [...latencies[kind].values()];
        return `| ${what} | ${xs.length} of ${EVENTS} | ${percentile(xs, 50).toFixed(0)} | ${percentile(xs, 95).toFixed(0)} | ${Math.max(0, ...xs).toFixed(0)} |\n`;
      };
      return (
        '## Delivery latency per destination kind\n\n' +
        `One store, four keys receiving its order events: a webhook (healthy loopback receiver), an SQS standard queue, an SQS FIFO ` +
        `queue and an EventBridge bus (docs/destinations.md; the queues on the stack's SQS emulator, the bus on its EventBridge ` +
        `stand-in, each through the STS stand-in with the key's role). ${EVENTS} \`orders place\` 100 ms apart after one warm-up. ` +
        `Latency: arrival minus the event's timestamp (the receiver's clock, SQS's SentTimestamp, the stand-in's receipt), so ` +
        `stream, fan-out, queue, signer and the send. Local stack, loopback; \`BENCH_ONLY=destinations\` runs it alone.\n\n` +
        '| destination | delivered | p50 ms | p95 ms | max ms |\n|---|---|---|---|---|\n' +
        row('webhook', 'webhook (signed POST)') +
        row('sqs', 'SQS standard queue') +
        row('sqs-fifo', 'SQS FIFO queue (ordered)') +
        row('eventbridge', 'EventBridge bus')
      );
    } finally {
      sqs.destroy();
      await hook.close();
      await bench.stop();
    }
  },
};
