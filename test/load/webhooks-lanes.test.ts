import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { handler as fanOut } from '#functions/events/handler.ts';
import { resetConfig } from '#shared/config.ts';
import { setLogSink } from '#shared/log.ts';
import { useOwnPipeline } from '#fixtures/own-pipeline.ts';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { deliveries, waitFor } from '#fixtures/webhooks.ts';
import { storedOutboxItem, streamRecord } from '#fixtures/stream-records.ts';

/**
 * A receiver that first answers 500 (`failing`), then holds every request open until released
 * (`hanging`), then answers 204. It counts the requests it holds at once (the endpoint's attempts
 * under way) and every 2xx it gave, per webhook-id.
 */
async function switchingReceiver() {
  let mode: 'failing' | 'hanging' | 'up' = 'failing';
  const held = new Set<ServerResponse>();
  let maxHeld = 0;
  const answered2xx = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    req.resume();
    const id = String(req.headers['webhook-id']);
    if (mode === 'failing') return void res.writeHead(500).end();
    const ok = () => {
      answered2xx.set(id, (answered2xx.get(id) ?? 0) + 1);
      res.writeHead(204).end();
    };
    if (mode === 'up') return ok();
    held.add(res);
    maxHeld = Math.max(maxHeld, held.size);
    res.on('close', () => held.delete(res));
    res.once('release', ok);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    held: () => held.size,
    maxHeld: () => maxHeld,
    answered2xx,
    hang: () => {
      mode = 'hanging';
    },
    recover: () => {
      mode = 'up';
      for (const res of [...held]) res.emit('release');
    },
    close: () =>
      new Promise<void>((resolve) => {
        mode = 'up';
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

type Line = { msg?: string; key_id?: number; event_id?: string; lane?: string };
type Log = {
  endpoint: { state: string; consecutive_failures: number };
  data: { event_id: string; state: string; attempts: number }[];
};

const EVENTS = 20;
const CAP = 2;

/**
 * The signer's lanes (docs/webhooks.md, "Lanes") on a pipeline of this file's own: the circuit opens
 * after 3 failures in a row, at most 2 attempts per endpoint in the slow lane; parking is out of
 * reach (1,000 failures over an hour) so the lanes alone are seen. A POST may take 5 min, so
 * "hanging" lasts until the test releases it. Nothing is timed: each step waits for the state it
 * means, and isolation is shown by order and counts.
 */
describe('webhooks: endpoints that fail move to the slow lane and back', () => {
  const logged: Line[] = [];
  const { receiver } = useOwnPipeline({
    before: () => {
      process.env.WEBHOOK_RETRY_SCHEDULE = '1,5,5,5,5';
      process.env.WEBHOOK_RESPONSE_TIMEOUT_MS = '300000';
      process.env.WEBHOOK_CIRCUIT_AFTER_FAILURES = '3';
      process.env.WEBHOOK_SLOW_LANE_ATTEMPTS_PER_ENDPOINT = String(CAP);
      process.env.WEBHOOK_PARK_AFTER_FAILURES = '1000';
      process.env.WEBHOOK_PARK_AFTER_SECONDS = '3600';
      process.env.LOG_LEVEL = 'info';
      resetConfig();
      setLogSink((line) => logged.push(JSON.parse(line) as Line));
    },
  });
  let bad: Awaited<ReturnType<typeof switchingReceiver>> | undefined;
  afterAll(async () => {
    await bad?.close();
    setLogSink((line) => process.stdout.write(line + '\n'));
  });

  it('opens the circuit of a failing endpoint, caps it in the slow lane beside a healthy one, and closes it on recovery', async () => {
    const store = await createStore();
    bad = await switchingReceiver();
    const healthy = await receiver();
    const badKey = await createKey(store, ['orders:read'], { webhook_url: bad.url });
    await createKey(store, ['orders:read'], { webhook_url: healthy.url });
    const endpointOf = async () => (await adminCommand<Log>('webhooks deliveries', { id: badKey.id })).endpoint;
    const linesOf = (msg: string) => logged.filter((l) => l.msg === msg && l.key_id === badKey.id);

    // (a) Three failures in a row open the circuit: the next attempts are the slow lane's.
    const first = await Promise.all(Array.from({ length: 3 }, () => storedOutboxItem(store)));
    await fanOut({ Records: first.map((item) => streamRecord(item)) });
    await waitFor('the circuit open', async () => (await endpointOf()).consecutive_failures >= 3, 60_000);
    bad.hang();
    await waitFor(
      'a retry moved to the slow lane',
      () => linesOf('webhook delivery moved to its endpoint’s lane').some((l) => l.lane === 'slow'),
      60_000,
    );

    // (b) While the failing endpoint holds its slow-lane attempts open, the healthy one gets everything.
    const items = await Promise.all(Array.from({ length: EVENTS }, () => storedOutboxItem(store)));
    await fanOut({ Records: items.map((item) => streamRecord(item)) });
    const healthyIds = () => new Set(healthy.received.map((q) => q.headers['webhook-id']));
    const healthyHasAll = () => items.every((i) => healthyIds().has(i.event_id));
    await waitFor('every healthy delivery', healthyHasAll, 60_000);
    await waitFor('both slow-lane slots in use', () => bad!.held() >= CAP, 60_000);
    // Never more than the cap at once, and none of the held attempts has ended: every healthy
    // delivery arrived while the failing endpoint's attempts were still open.
    expect(bad.maxHeld()).toBe(CAP);
    expect(bad.answered2xx.size).toBe(0);
    // The failures that opened the circuit were the fast lane's; the held attempts are the slow lane's.
    expect(linesOf('webhook attempt failed; retrying').filter((l) => l.lane === 'fast').length).toBeGreaterThanOrEqual(
      3,
    );

    // (c) Recovery: a success closes the circuit, and the rest return to the fast lane.
    const marked = logged.length;
    bad.recover();
    await waitFor('the circuit closed', async () => (await endpointOf()).consecutive_failures === 0, 60_000);
    const all = [...first, ...items].map((i) => i.event_id);
    await waitFor(
      'every delivery of the recovered endpoint delivered',
      async () =>
        (await deliveries(badKey.id)).filter((d) => all.includes(d.event_id) && d.state === 'delivered').length ===
        all.length,
      180_000,
    );
    const delivered = logged.slice(marked).filter((l) => l.msg === 'webhook delivered' && l.key_id === badKey.id);
    expect(delivered.filter((l) => l.lane === 'slow').length).toBeLessThanOrEqual(CAP + 1);
    expect(delivered.filter((l) => l.lane === 'fast').length).toBeGreaterThan(0);
    expect(
      logged.slice(marked).some((l) => l.msg === 'webhook delivery moved to its endpoint’s lane' && l.lane === 'fast'),
    ).toBe(true);
    // A new event after the recovery goes straight through the fast lane.
    const after = await storedOutboxItem(store);
    await fanOut({ Records: [streamRecord(after)] });
    // The signer logs the delivery after the receiver's answer: wait for its line, not the answer.
    const ofNew = () => logged.filter((l) => l.event_id === after.event_id && l.key_id === badKey.id);
    await waitFor('the new event delivered', () => bad!.answered2xx.has(after.event_id) && ofNew().length > 0, 60_000);
    const ofAfter = ofNew();
    expect(ofAfter.map((l) => [l.msg, l.lane])).toEqual([['webhook delivered', 'fast']]);

    // (d) Nothing lost or doubled: each delivery delivered once, each id answered 2xx once.
    const log = await deliveries(badKey.id);
    expect(log.map((d) => d.event_id).sort()).toEqual([...all, after.event_id].sort());
    expect(log.every((d) => d.state === 'delivered')).toBe(true);
    expect([...bad.answered2xx.keys()].sort()).toEqual([...all, after.event_id].sort());
    expect([...bad.answered2xx.values()].every((n) => n === 1)).toBe(true);
    expect(healthy.received).toHaveLength(first.length + EVENTS + 1);
  }, 600_000);
});
