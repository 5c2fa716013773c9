import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { handler as fanOut } from '#functions/events/handler.ts';
import { resetConfig } from '#shared/config.ts';
import { setLogSink } from '#shared/log.ts';
import { useOwnPipeline } from '#fixtures/own-pipeline.ts';
import { adminCommand, createKey, createStore } from '#fixtures/api.ts';
import { deliveries, waitFor } from '#fixtures/webhooks.ts';
import { storedOutboxItem, streamRecord } from '#fixtures/stream-records.ts';

/**
 * A receiver that never finishes an answer until released: `hang` sends nothing, `drip` sends
 * the headers and then a byte every 200 ms. It counts what it holds, and any request that ended
 * before the release (the signer gave up on it, or a connection broke).
 */
async function slowReceiver(mode: 'hang' | 'drip') {
  const held: ServerResponse[] = [];
  const ids = new Set<string>();
  let endedEarly = 0;
  let released = false;
  const timers: NodeJS.Timeout[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    ids.add(String(req.headers['webhook-id']));
    if (released) return void res.writeHead(204).end();
    held.push(res);
    res.on('close', () => {
      if (!released) endedEarly += 1;
    });
    if (mode === 'drip') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      timers.push(setInterval(() => res.write('.'), 200));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    held: () => held.length,
    ids,
    endedEarly: () => endedEarly,
    release: () => {
      released = true;
      timers.forEach(clearInterval);
      for (const res of held) (res.headersSent ? res : res.writeHead(204)).end();
    },
    close: () =>
      new Promise<void>((resolve) => {
        released = true;
        timers.forEach(clearInterval);
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const EVENTS = 20;

/**
 * Isolation between receivers, on a pipeline of this file's own (the shared stack's timing stays
 * as it is): a response timeout of 5 min, so that "hanging" lasts as long as the test wants, and
 * parking after 3 failures spanning 2 s with a probe every second (production: 10 failures over
 * 15 min, a probe every 5 min). No wall clock is asserted: isolation is shown by order.
 */
describe('webhooks: a slow or failing receiver never delays another key', () => {
  const { receiver } = useOwnPipeline({
    before: () => {
      process.env.WEBHOOK_RETRY_SCHEDULE = '1,1,2';
      process.env.WEBHOOK_RESPONSE_TIMEOUT_MS = '300000';
      process.env.WEBHOOK_PARK_AFTER_FAILURES = '3';
      process.env.WEBHOOK_PARK_AFTER_SECONDS = '2';
      process.env.WEBHOOK_PROBE_INTERVAL_SECONDS = '1';
      resetConfig();
    },
  });
  const slow: Awaited<ReturnType<typeof slowReceiver>>[] = [];
  afterEach(async () => {
    await Promise.all(slow.splice(0).map((r) => r.close()));
    setLogSink((line) => process.stdout.write(line + '\n'));
  });

  it('delivers every healthy event while the hanging and dripping receivers still hold theirs', async () => {
    const store = await createStore();
    const hang = await slowReceiver('hang');
    const drip = await slowReceiver('drip');
    slow.push(hang, drip);
    const failing = await receiver(() => ({ status: 500 }));
    const healthy = await receiver();
    await createKey(store, ['orders:read'], { webhook_url: hang.url });
    await createKey(store, ['orders:read'], { webhook_url: drip.url });
    await createKey(store, ['orders:read'], { webhook_url: failing.url });
    await createKey(store, ['orders:read'], { webhook_url: healthy.url });

    const items = await Promise.all(Array.from({ length: EVENTS }, () => storedOutboxItem(store)));
    const t0 = Date.now();
    await fanOut({ Records: items.map((item) => streamRecord(item)) });
    console.log(`fan-out of ${EVENTS} events: ${Date.now() - t0} ms`);

    const healthyIds = () => new Set(healthy.received.map((q) => q.headers['webhook-id']));
    await waitFor('every healthy delivery', () => healthyIds().size === EVENTS, 60_000);
    console.log(
      `healthy: ${EVENTS} deliveries ${Date.now() - t0} ms after the first fan-out; slow held ${hang.held()}+${drip.held()}`,
    );
    // The order that proves isolation: the healthy receiver has everything, and not one of the
    // slow requests has ended, so no healthy delivery waited for a slow one to finish. (A signer
    // that awaits a batch together holds the healthy messages behind the 5-minute hangs.)
    expect(hang.endedEarly()).toBe(0);
    expect(drip.endedEarly()).toBe(0);
    await waitFor(
      'every slow receiver holding every event',
      () => hang.ids.size === EVENTS && drip.ids.size === EVENTS,
      60_000,
    );
    expect(hang.endedEarly() + drip.endedEarly()).toBe(0);
    // (Held for longer than the queue's visibility timeout, a message may come back and be
    // attempted again: at least once, so `held` may exceed the events; the ids may not.)
    expect(hang.held()).toBeGreaterThanOrEqual(EVENTS);
    expect(healthyIds()).toEqual(new Set(items.map((i) => i.event_id)));
    expect(failing.received.length).toBeGreaterThan(0);

    // Released, the slow ones are delivered too: slow is not lost.
    hang.release();
    drip.release();
    const [hangKey] = (
      await adminCommand<{ data: { key_id: number; webhook_url: string }[] }>('webhooks endpoints', { store })
    ).data.filter((k) => k.webhook_url === hang.url);
    await waitFor(
      "the hanging key's deliveries delivered",
      async () => (await deliveries(hangKey!.key_id)).filter((d) => d.state === 'delivered').length === EVENTS,
      120_000,
    );
  }, 300_000);

  it('parks an endpoint that keeps failing, attempts nothing meanwhile, then drains the backlog oldest first', async () => {
    let down = true;
    const answers: { id: string; status: number }[] = [];
    const r = await receiver((req) => {
      const status = down ? 503 : 204;
      answers.push({ id: req.headers['webhook-id'] ?? '', status });
      return { status };
    });
    const store = await createStore();
    const key = await createKey(store, ['orders:read'], { webhook_url: r.url });
    const logged: Record<string, unknown>[] = [];
    setLogSink((line) => logged.push(JSON.parse(line)));

    const first = await storedOutboxItem(store);
    await fanOut({ Records: [streamRecord(first)] });
    type Log = {
      endpoint: { state: string; reason: string | null; since: string | null };
      data: { event_id: string; state: string; parked_at: string | null; attempts: number }[];
    };
    const parked = await waitFor(
      'the endpoint parked',
      async () => {
        const log = await adminCommand<Log>('webhooks deliveries', { id: key.id });
        return log.endpoint.state === 'parked' ? log : undefined;
      },
      60_000,
    );
    expect(parked.endpoint.reason).toMatch(/^3 failed attempts in a row over .*; last: HTTP 503$/);
    // The signer announces the parking after it is stored (and after the probe is scheduled), so
    // the line may come a moment after the state can be read: wait for it, do not race it.
    await waitFor('the parking announced', () =>
      logged.some((l) => l.msg === 'webhook.endpoint_parked' && l.key_id === key.id),
    );

    // Later events wait in the log, pending and parked; none is attempted (only the probe, with the oldest).
    const later = await Promise.all(Array.from({ length: 5 }, () => storedOutboxItem(store)));
    for (const item of later) await fanOut({ Records: [streamRecord(item)] });
    const all = [first, ...later].map((i) => i.event_id);
    await waitFor(
      'every delivery parked',
      async () => {
        const log = await adminCommand<Log>('webhooks deliveries', { id: key.id });
        return log.data.length === all.length && log.data.every((d) => d.state === 'pending' && d.parked_at !== null);
      },
      60_000,
    );
    await waitFor('a failed probe', () => answers.length > 3, 30_000);
    expect(new Set(answers.map((a) => a.id))).toEqual(new Set([first.event_id]));

    down = false;
    const done = await waitFor(
      'the backlog drained',
      async () => {
        const log = await adminCommand<Log>('webhooks deliveries', { id: key.id });
        return log.endpoint.state === 'active' && log.data.every((d) => d.state === 'delivered') ? log : undefined;
      },
      60_000,
    );
    expect(done.data.every((d) => d.parked_at === null)).toBe(true);
    // Oldest first, each once.
    expect(answers.filter((a) => a.status === 204).map((a) => a.id)).toEqual(all);
  }, 300_000);
});
