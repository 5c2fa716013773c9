import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ListTablesCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createGateway } from '#emulation/local/gateway.ts';
import { setRequestLogging } from '#shared/log.ts';
import { setMetricsEnabled } from '#shared/metrics.ts';
import { startDynamoDbLocal } from '#emulation/local/dynamodb-local.ts';
import { baseUrl, storeWithKey } from '#fixtures/api.ts';
import { seedProduct } from '#fixtures/catalog.ts';
import { freePort } from '#fixtures/free-port.ts';
import { waitFor } from '#fixtures/webhooks.ts';

/** The local gateway at the HTTP level (docs/api.md, "The local stack"), over connections a real client keeps alive. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  reusedSocket: boolean;
}

function send(
  agent: Agent,
  method: string,
  url: string,
  headers: Record<string, string> = {},
  body?: Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, agent, headers: { ...headers, ...(body ? { 'Content-Length': String(body.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            body: Buffer.concat(chunks),
            reusedSocket: req.reusedSocket,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Whether `text` holds one whole HTTP/1.1 response with a Content-Length body. */
function complete(text: string): boolean {
  const end = text.indexOf('\r\n\r\n');
  const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1];
  return end >= 0 && length !== undefined && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length);
}

/**
 * One TCP connection: `first`, and once its answer is in, `second` on the same socket. Resolves
 * with everything the server sent until it closed.
 */
function raw(url: string, first: string, second: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let received = '';
    let sent = false;
    socket.on('data', (d) => {
      received += d.toString('latin1');
      if (!sent && complete(received)) {
        sent = true;
        socket.write(second);
      }
    });
    socket.on('end', () => resolve(received));
    socket.on('error', reject);
    socket.on('connect', () => socket.write(first));
  });
}

const origin = () => new URL(baseUrl()).origin;
const base = () => new URL(baseUrl()).pathname;

describe('the local gateway over a keep-alive connection', () => {
  it("answers a body over the limit 413 with Connection: close, and the client's next request works", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const warm = await send(agent, 'GET', `${baseUrl()}/openapi.json`);
      expect(warm.status).toBe(200);
      const big = await send(
        agent,
        'POST',
        `${baseUrl()}/catalog/products/batch`,
        { 'Content-Type': 'application/json' },
        Buffer.alloc(10 * 1024 * 1024 + 1, 0x20),
      );
      expect(big.status).toBe(413);
      expect(big.headers.connection).toBe('close');
      expect(JSON.parse(big.body.toString())).toEqual({
        code: 'payload_too_large',
        message: expect.any(String),
        field: null,
      });
      const next = await send(agent, 'GET', `${baseUrl()}/openapi.json`);
      expect(next.status).toBe(200);
    } finally {
      agent.destroy();
    }
  });

  it('keeps an idle keep-alive connection open for 65 s, not 5: the client closes it, never the server under it', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const first = await send(agent, 'GET', `${baseUrl()}/openapi.json`);
      expect(first.status).toBe(200);
      expect(first.headers['keep-alive']).toBe('timeout=65');
      // Idle past Node's default of 5 s: with it the server has closed the socket by now.
      await new Promise((r) => setTimeout(r, 6_000));
      const next = await send(agent, 'GET', `${baseUrl()}/openapi.json`);
      expect(next.status).toBe(200);
      expect(next.reusedSocket).toBe(true);
    } finally {
      agent.destroy();
    }
  });

  it("answers HEAD with GET's status and Content-Length and no body, and the socket carries the next request", async () => {
    const { storeId, key } = await storeWithKey(['catalog:read']);
    for (let i = 0; i < 3; i++) await seedProduct(storeId, { name: `Head ${i}` });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const [url, headers] of [
        [`${baseUrl()}/products`, { Authorization: `Bearer ${key.token}`, Accept: 'application/json' }],
        [`${baseUrl()}/openapi.json`, {}],
      ] as const) {
        const get = await send(agent, 'GET', url, headers);
        const head = await send(agent, 'HEAD', url, headers);
        expect(get.status).toBe(200);
        expect(get.body.length).toBeGreaterThan(100);
        expect(head.status).toBe(200);
        expect(head.headers['content-length']).toBe(String(get.body.length));
        expect(head.headers['content-type']).toBe(get.headers['content-type']);
        expect(head.body.length).toBe(0);
        // Stray body bytes after a HEAD would corrupt this answer on the same socket.
        const after = await send(agent, 'GET', url, headers);
        expect(after.reusedSocket).toBe(true);
        expect(after.body.length).toBe(get.body.length);
      }
    } finally {
      agent.destroy();
    }
  });

  it('answers a malformed request and oversized headers with the JSON error body, then closes', async () => {
    const ok = `GET ${base()}/openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`;
    for (const [bad, message] of [
      [`GET ${base()}/products HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n`, /not valid HTTP/],
      [`GET /a b c d\r\n\r\n`, /not valid HTTP/],
      [
        `GET ${base()}/products HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        /headers are larger/,
      ],
    ] as const) {
      const out = await raw(origin(), ok, bad);
      // The keep-alive request is answered, then the bad one on the same socket, then the server closes.
      const answers = out.split(/(?=HTTP\/1\.1 \d{3} )/);
      expect(answers.map((a) => a.slice(0, 12))).toEqual(['HTTP/1.1 200', 'HTTP/1.1 400']);
      const [head, body] = answers[1]!.split('\r\n\r\n') as [string, string];
      expect(head).toMatch(/\r\nContent-Type: application\/json\r\n/i);
      expect(head).toMatch(/\r\nConnection: close/i);
      expect(JSON.parse(body)).toEqual({ code: 'bad_request', message: expect.stringMatching(message), field: null });
    }
  });
});

describe('the request log', () => {
  let server: Server;
  const lines: string[] = [];
  beforeAll(async () => {
    // As the local stack does: its own request line, no EMF lines.
    setRequestLogging(false);
    setMetricsEnabled(false);
    server = createGateway({ log: (line) => lines.push(line) });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));

  it('never holds a credential sent in the query string, and keeps the other parameters', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const port = (server.address() as { port: number }).port;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const query of [
        `access_token=${key.token}&page=2`,
        `page=2&token=${key.token}`,
        `api_key=${key.token}&page=2`,
        `page=2&key=${key.token}`,
      ]) {
        await send(agent, 'GET', `http://127.0.0.1:${port}${base()}/products?${query}`, {
          Authorization: `Bearer ${key.token}`,
        });
      }
      await waitFor('four request lines', () => lines.filter((l) => l.includes('/products?')).length === 4);
      const logged = lines.filter((l) => l.includes('/products?'));
      for (const line of logged) {
        expect(line).not.toContain(key.token);
        expect(line).toMatch(/page=2/);
        expect(line).toMatch(/(access_token|token|api_key|key)=\[redacted\]/);
      }
    } finally {
      agent.destroy();
    }
  });
});

describe("the gateway's onAuthorized hook (bench/code-path.ts counts each Lambda's files with it)", () => {
  let server: Server;
  const seen: string[] = [];
  beforeAll(async () => {
    setRequestLogging(false);
    setMetricsEnabled(false);
    server = createGateway({
      onAuthorized: async () => {
        seen.push('authorized');
        // Awaited: the handler starts only once the hook is done.
        await new Promise((r) => setTimeout(r, 50));
        seen.push('hook done');
      },
      log: (line) => seen.push(line.split(' ').slice(0, 3).join(' ')),
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  });
  afterAll(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));

  it('is awaited once per request the authorizer allows, before its handler; never for one it refuses', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}${base()}/products?limit=1`;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const allowed = await send(agent, 'GET', url, { Authorization: `Bearer ${key.token}` });
      expect(allowed.status).toBe(200);
      expect(seen).toEqual(['authorized', 'hook done', `GET ${base()}/products?limit=1 200`]);
      seen.length = 0;
      const refused = await send(agent, 'GET', url, { Authorization: 'Bearer sk_live_not_a_key' });
      expect(refused.status).toBe(401);
      expect(seen).toEqual([`GET ${base()}/products?limit=1 401`]);
    } finally {
      agent.destroy();
    }
  });
});

describe("DynamoDB Local's data files", () => {
  it('are readable by their owner only: the directory 0700, its files 0600, also those an older start left 0644', async () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'ddb-perms-')), 'dynamodb');
    const before = path.join(dataDir, 'left-by-an-older-start.db');
    await import('node:fs').then((fs) => fs.mkdirSync(dataDir, { recursive: true, mode: 0o755 }));
    writeFileSync(before, '', { mode: 0o644 });
    const store = startDynamoDbLocal({ port: await freePort(), dataDir });
    try {
      const client = new DynamoDBClient({
        endpoint: store.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      });
      await waitFor(
        'the store to answer',
        () =>
          client.send(new ListTablesCommand({})).then(
            () => true,
            () => false,
          ),
        120_000,
        500,
      );
      await waitFor(
        'its database file',
        () => readdirSync(dataDir).some((f) => f.startsWith('shared-local-instance')),
        120_000,
        200,
      );
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const file of readdirSync(dataDir))
        expect([file, statSync(path.join(dataDir, file)).mode & 0o777]).toEqual([file, 0o600]);
    } finally {
      await store.stop();
      rmSync(path.dirname(dataDir), { recursive: true, force: true });
    }
  });
});

describe('npm run admin against another DATA_DIR than the stack', () => {
  const run = promisify(execFile);
  const admin = async (env: Record<string, string | undefined>) => {
    const full: NodeJS.ProcessEnv = {
      ...process.env,
      DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
      TABLE_NAME: inject('tableName'),
      ...env,
    };
    for (const [name, value] of Object.entries(full)) if (value === undefined) delete full[name];
    return run(
      process.execPath,
      [
        '--import',
        'tsx',
        'bin/admin.ts',
        'stores',
        'create',
        '--id',
        'never-made',
        '--name',
        'x',
        '--currency',
        'EUR',
        '--json',
      ],
      { env: full, timeout: 120_000 },
    ).then(
      (out) => ({ code: 0, ...out }),
      (err: { code: number; stdout: string; stderr: string }) => ({
        code: err.code,
        stdout: err.stdout,
        stderr: err.stderr,
      }),
    );
  };
  const errorLines = (stderr: string) =>
    stderr
      .trim()
      .split('\n')
      .filter((l) => l && !/Warning|node --trace-warnings/.test(l));

  it("refuses in one line naming the stack's key file, and makes no key of its own", async () => {
    const otherDir = mkdtempSync(path.join(tmpdir(), 'other-data-'));
    try {
      const out = await admin({ WEBHOOK_SECRET_KEY_FILE: undefined, DATA_DIR: otherDir });
      expect(out.code).toBe(1);
      expect(out.stdout).toBe('');
      expect(errorLines(out.stderr)).toEqual([
        expect.stringContaining(`the running stack seals webhook secrets with ${inject('webhookSecretKeyFile')}`),
      ]);
      expect(existsSync(path.join(otherDir, 'webhook-secret.key'))).toBe(false);
    } finally {
      rmSync(otherDir, { recursive: true, force: true });
    }
  });

  it('says in one line which store and DATA_DIR it tried when no stack answers there', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}`;
    const out = await admin({ DYNAMODB_ENDPOINT: endpoint, DATA_DIR: '/tmp/no-stack-here' });
    expect(out.code).toBe(1);
    const lines = errorLines(out.stderr);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: cannot reach DynamoDB at /);
    expect(lines[0]).toContain(endpoint);
    expect(lines[0]).toContain('DATA_DIR /tmp/no-stack-here');
  });
});
