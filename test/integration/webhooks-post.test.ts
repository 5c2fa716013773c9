import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESPONSE_BODY_BYTES, postWebhook, USER_AGENT, WEBHOOK_TIMEOUT_MS } from '#functions/webhooks/post.ts';
import { startReceiver } from '#fixtures/webhooks.ts';

/** One delivery attempt over real HTTP: timeouts, redirects, Retry-After and the SSRF refusals. */
describe('webhook POST', () => {
  let hanging: Server;
  let hangingUrl: string;
  beforeAll(async () => {
    hanging = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', () => r()));
    hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/hooks`;
  });
  afterAll(async () => {
    hanging.closeAllConnections();
    await new Promise((r) => hanging.close(r));
  });

  it('waits 10 s by default', () => {
    expect(WEBHOOK_TIMEOUT_MS).toBe(10_000);
  });

  it('turns a receiver that does not answer in time into a failed attempt', async () => {
    const result = await postWebhook(hangingUrl, {}, '{}', { allowLoopback: true, timeoutMs: 300 });
    expect(result).toMatchObject({ status: null, error: 'timeout: no complete response within 0.3 s' });
    // Not before its time; how long after it depends on the machine's load, not on the code.
    expect(result.ms).toBeGreaterThanOrEqual(290);
  });

  it('times out a receiver that answers its headers but never finishes the body', async () => {
    const slow = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
    });
    await new Promise<void>((r) => slow.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/hooks`;
      expect(await postWebhook(url, {}, '{}', { allowLoopback: true, timeoutMs: 300 })).toMatchObject({
        status: null,
        error: 'timeout: no complete response within 0.3 s',
      });
    } finally {
      slow.closeAllConnections();
      await new Promise((r) => slow.close(r));
    }
  });

  it('stops reading a receiver that answers an endless body: the status is recorded, the bytes read bounded', async () => {
    // The receiver writes 64 KiB chunks as fast as the socket takes them, until the signer closes it;
    // it counts what it handed to the socket. That includes what the kernel's socket buffers hold
    // (a few MiB on loopback), so the bound is generous; an attempt that read on would run to its
    // timeout and take in hundreds of MiB.
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let written = 0;
    let closed!: () => void;
    const socketClosed = new Promise<void>((r) => {
      closed = r;
    });
    const endless = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      let open = true;
      res.on('close', () => {
        open = false;
        closed();
      });
      const pump = () => {
        while (open) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(endless.address() as AddressInfo).port}/hooks`;
      const result = await postWebhook(url, {}, '{}', { allowLoopback: true });
      expect(result).toMatchObject({ status: 200, error: null });
      await socketClosed;
      expect(written).toBeGreaterThan(MAX_RESPONSE_BODY_BYTES);
      expect(written).toBeLessThan(16 * 1024 * 1024);
    } finally {
      endless.closeAllConnections();
      await new Promise((r) => endless.close(r));
    }
  });

  it('sends JSON with the signature headers and its user agent, and reports the status', async () => {
    const r = await startReceiver(() => ({ status: 202 }));
    try {
      const result = await postWebhook(
        r.url,
        { 'webhook-id': 'evt_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
        '{"a":1}',
        { allowLoopback: true },
      );
      expect(result).toMatchObject({ status: 202, error: null });
      expect(r.received[0]?.headers).toMatchObject({
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': 'evt_1',
        'content-length': '7',
      });
      expect(r.received[0]?.body).toBe('{"a":1}');
    } finally {
      await r.close();
    }
  });

  it('does not follow redirects: a 3xx is a failed attempt', async () => {
    const target = await startReceiver();
    const r = await startReceiver(() => ({ status: 307, headers: { Location: target.url } }));
    try {
      expect(await postWebhook(r.url, {}, '{}', { allowLoopback: true })).toMatchObject({
        status: 307,
        error: 'HTTP 307',
      });
      expect(target.received).toHaveLength(0);
    } finally {
      await Promise.all([r.close(), target.close()]);
    }
  });

  it('reads Retry-After on 429 and 503 only', async () => {
    let status = 429;
    const r = await startReceiver(() => ({ status, headers: { 'Retry-After': '17' } }));
    try {
      expect((await postWebhook(r.url, {}, '{}', { allowLoopback: true })).retryAfterSeconds).toBe(17);
      status = 503;
      expect((await postWebhook(r.url, {}, '{}', { allowLoopback: true })).retryAfterSeconds).toBe(17);
      status = 500;
      expect((await postWebhook(r.url, {}, '{}', { allowLoopback: true })).retryAfterSeconds).toBeUndefined();
    } finally {
      await r.close();
    }
  });

  it('refuses private targets outside the local stack, before connecting', async () => {
    const r = await startReceiver();
    try {
      const refused = await postWebhook(r.url, {}, '{}', { allowLoopback: false });
      expect(refused).toMatchObject({ status: null, error: 'refused: webhook_url must use https' });
      for (const url of [
        'https://127.0.0.1/hooks',
        'https://169.254.169.254/latest',
        'https://[::1]/x',
        'https://localhost/x',
        'https://metadata.google.internal/x',
      ]) {
        const out = await postWebhook(url, {}, '{}', { allowLoopback: false });
        expect(out.status, url).toBeNull();
        expect(out.error, url).toMatch(/^refused: /);
      }
      expect(r.received).toHaveLength(0);
    } finally {
      await r.close();
    }
  });

  it('admits only loopback when private webhooks are allowed', async () => {
    const out = await postWebhook('http://10.0.0.1/hooks', {}, '{}', { allowLoopback: true });
    expect(out).toMatchObject({ status: null });
    expect(out.error).toMatch(/^refused: /);
  });
});
