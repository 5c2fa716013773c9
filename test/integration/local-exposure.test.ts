import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { startLocalQueueServer, type LocalQueueServer } from '#emulation/local/local-queue.ts';
import { baseUrl } from '#fixtures/api.ts';

/** Issue 12: the local stack's own servers answer on loopback only. */
const reachable = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** This machine's first non-loopback IPv4 address: where a neighbour on the network would connect. */
const lanAddress = () =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

describe('local network exposure', () => {
  let queue: LocalQueueServer;
  beforeAll(async () => {
    queue = await startLocalQueueServer();
  });
  afterAll(() => queue.stop());

  it('serves the webhook queue on 127.0.0.1 and not on the network address', async () => {
    expect(await reachable('127.0.0.1', queue.port)).toBe(true);
    const lan = lanAddress();
    expect(lan, 'this test needs a non-loopback IPv4 interface').toBeDefined();
    expect(await reachable(lan!, queue.port)).toBe(false);
  });

  it('serves the API on 127.0.0.1 and not on the network address', async () => {
    const port = Number(new URL(baseUrl()).port);
    expect(await reachable('127.0.0.1', port)).toBe(true);
    expect(await reachable(lanAddress()!, port)).toBe(false);
  });

  it('creates working queues through the SQS API', async () => {
    const q = await queue.createQueue('exposure-test', { VisibilityTimeout: '5' });
    expect(q.queueUrl).toContain('/exposure-test');
    expect(q.queueArn).toMatch(/^arn:aws:sqs:.*:exposure-test$/);
  });
});
