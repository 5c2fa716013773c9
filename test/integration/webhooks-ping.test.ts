import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, createKey, createStore, type TestKey } from '#fixtures/api.ts';
import { closedPort, deliveries, startReceiver, verify } from '#fixtures/webhooks.ts';

const run = promisify(execFile);

/** The real CLI in its own process; `env` on top of the test store's. */
async function cli(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run('npm', ['run', 'admin', '--', ...args], {
      env: {
        ...process.env,
        DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
        TABLE_NAME: inject('tableName'),
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...env,
      },
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
const errorLines = (stderr: string) =>
  stderr
    .trim()
    .split('\n')
    .filter((l) => l !== '' && !l.includes('Warning') && !l.startsWith('>'));

interface Ping {
  event_id: string;
  type: string;
  url: string;
  status: number | null;
  ms: number;
  delivered: boolean;
  error: string | null;
}

describe("webhooks ping: a signed test delivery straight to the key's URL", () => {
  let ok: Awaited<ReturnType<typeof startReceiver>>;
  let failing: Awaited<ReturnType<typeof startReceiver>>;
  let storeId: string;
  let key: TestKey;
  beforeAll(async () => {
    ok = await startReceiver(() => ({ status: 204 }));
    failing = await startReceiver(() => ({ status: 500 }));
    storeId = await createStore();
    key = await createKey(storeId, ['orders:read'], { webhook_url: ok.url, events: 'order.paid' });
  });
  afterAll(async () => {
    await Promise.all([ok.close(), failing.close()]);
  });

  it('POSTs one webhook.ping that standardwebhooks verifies, and reports the status and the time it took', async () => {
    const ping = await adminCommand<Ping>('webhooks ping', { id: key.id });
    expect(ping).toEqual({
      event_id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'webhook.ping',
      url: ok.url,
      status: 204,
      ms: expect.any(Number),
      delivered: true,
      error: null,
    });
    expect(ping.ms).toBeGreaterThanOrEqual(0);
    expect(ok.received).toHaveLength(1);
    const request = ok.received[0]!;
    expect(request.headers['webhook-id']).toBe(ping.event_id);
    const event = verify(key.webhook_secret, request) as Record<string, any>;
    expect(Object.keys(event)).toEqual(['type', 'timestamp', 'data']);
    expect(event).toEqual({
      type: 'webhook.ping',
      timestamp: expect.stringMatching(/Z$/),
      data: { key_id: key.id, store_id: storeId, events: ['order.paid'] },
    });
    // Straight to the URL: no delivery record, no retry.
    expect(await deliveries(key.id)).toEqual([]);
  });

  it("reports a failing receiver's status (500) and an unreachable one (no status), without retrying", async () => {
    await adminCommand('keys set-webhook', { id: key.id, url: failing.url });
    const ping = await adminCommand<Ping>('webhooks ping', { id: key.id });
    expect(ping).toMatchObject({ status: 500, delivered: false, error: 'HTTP 500' });
    expect(failing.received).toHaveLength(1);
    verify(key.webhook_secret, failing.received[0]!);

    await adminCommand('keys set-webhook', { id: key.id, url: `http://127.0.0.1:${await closedPort()}/hooks` });
    const down = await adminCommand<Ping>('webhooks ping', { id: key.id });
    expect(down).toMatchObject({ status: null, delivered: false, error: expect.stringMatching(/^connection failed/) });
    expect(await deliveries(key.id)).toEqual([]);
  });

  it('refuses a key without a URL, a revoked key and an unknown key with one error', async () => {
    const bare = await createKey(storeId, ['orders:read']);
    expect(await admin({ command: 'webhooks ping', args: { id: bare.id } })).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', field: 'id' },
    });
    const revoked = await createKey(storeId, ['orders:read'], { webhook_url: ok.url });
    await adminCommand('keys revoke', { id: revoked.id });
    expect(await admin({ command: 'webhooks ping', args: { id: revoked.id } })).toMatchObject({
      ok: false,
      error: { code: 'invalid_transition' },
    });
    expect(await admin({ command: 'webhooks ping', args: { id: 99_999_999 } })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    expect(await admin({ command: 'webhooks ping', args: { id: 'abc' } })).toMatchObject({
      ok: false,
      error: { code: 'validation_failed', field: 'id' },
    });
  });

  it('through the CLI: one JSON document with --json; a key without a URL is one error line and a non-zero exit', async () => {
    const target = await createKey(storeId, ['orders:read'], { webhook_url: ok.url });
    const before = ok.received.length;
    const out = await cli(['webhooks', 'ping', '--id', String(target.id), '--json']);
    expect(out.code).toBe(0);
    expect(out.stdout.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(out.stdout)).toMatchObject({ status: 204, delivered: true, ms: expect.any(Number) });
    expect(ok.received).toHaveLength(before + 1);

    const bare = await createKey(storeId, ['orders:read']);
    const refused = await cli(['webhooks', 'ping', '--id', String(bare.id), '--json']);
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(errorLines(refused.stderr)).toEqual([expect.stringMatching(/has no webhook URL/)]);
  }, 600_000);

  it('keeps the public-address policy: without ALLOW_PRIVATE_WEBHOOKS a loopback URL is refused, nothing is sent', async () => {
    const target = await createKey(storeId, ['orders:read'], { webhook_url: ok.url });
    const before = ok.received.length;
    const out = await cli(['webhooks', 'ping', '--id', String(target.id), '--json'], { ALLOW_PRIVATE_WEBHOOKS: '0' });
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({
      status: null,
      delivered: false,
      error: expect.stringMatching(/^refused/),
    });
    expect(ok.received).toHaveLength(before);
  }, 300_000);
});
