import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { pollQueue } from '#emulation/local/queue-poller.ts';

/**
 * The rehearsal runs 14 queue pollers (a mapping's pollers, for each of its queues) and the local
 * stack 7, all stopped by one signal; each long poll in flight holds listeners on its signal (the
 * SDK's retry race, its HTTP handler). `npm run rehearse` printed a MaxListenersExceededWarning at
 * start, Node's hint at a leak where there was none.
 */
describe('queue pollers sharing one stop signal', () => {
  const held: ServerResponse[] = [];
  let server: ReturnType<typeof createServer> | undefined;
  afterEach(async () => {
    for (const res of held.splice(0)) res.destroy();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('hold their long polls without a MaxListenersExceededWarning', async () => {
    const POLLERS = 16;
    // A queue endpoint that takes each ReceiveMessage and answers none, as a long poll on an empty queue.
    let received = 0;
    let allReceived = () => {};
    const allIn = new Promise<void>((resolve) => (allReceived = resolve));
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      held.push(res);
      if (++received === POLLERS) allReceived();
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const client = new SQSClient({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      maxAttempts: 1,
    });
    const warnings: Error[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'MaxListenersExceededWarning') warnings.push(w);
    };
    process.on('warning', onWarning);
    const stop = new AbortController();
    try {
      const queue = { url: 'http://127.0.0.1/000000000000/q', arn: 'arn:aws:sqs:us-east-1:000000000000:q' };
      const loops = Array.from({ length: POLLERS }, () =>
        pollQueue(queue, async () => ({ batchItemFailures: [] }), stop.signal, { client }),
      );
      await allIn;
      // process.emitWarning emits on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      stop.abort();
      await Promise.all(loops);
    } finally {
      process.off('warning', onWarning);
      client.destroy();
    }
    expect(warnings.map((w) => w.message)).toEqual([]);
  });
});
