import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { adminCommand, baseUrl, createKey, createStore } from '#fixtures/api.ts';
import { freePort } from '#fixtures/free-port.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance, pinned) against the local
 * stack: the server scenarios of revisions 2026-07-28 and 2025-11-25 (`--suite all`: the draft
 * scenarios of 2026-07-28, server-stateless among them, too) and the authorization-server
 * scenarios, the store admin approving the request through the admin handler. A server run fails
 * on any failed check that test/fixtures/conformance-expected-failures.yaml does not list, and on a
 * listed check that passes. Results per scenario: docs/mcp.md#conformance.
 */
const CLI = fileURLToPath(
  new URL('../../node_modules/@modelcontextprotocol/conformance/dist/index.js', import.meta.url),
);
const EXPECTED_FAILURES = fileURLToPath(new URL('../fixtures/conformance-expected-failures.yaml', import.meta.url));
const root = () => baseUrl().slice(0, -API_BASE_PATH.length);
const outDirs: string[] = [];
afterAll(() => {
  for (const dir of outDirs) rmSync(dir, { recursive: true, force: true });
});

/** The suite's CLI on this process's Node (the project's 22: the suite needs 22.19 or later). */
function conformance(args: string[], onLine: (line: string) => void = () => {}) {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let partial = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk;
    partial += chunk;
    for (let nl = partial.indexOf('\n'); nl >= 0; nl = partial.indexOf('\n')) {
      onLine(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    out += chunk;
  });
  const exited = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, out })),
  );
  return { exited, kill: () => child.kill() };
}

/** What the suite wrote per scenario (`-o`): each check's id and status, by scenario name. */
function results(dir: string, prefix: string): Record<string, { id: string; status: string }[]> {
  const byScenario: Record<string, { id: string; status: string }[]> = {};
  for (const entry of readdirSync(dir)) {
    const scenario = entry.slice(prefix.length).replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    byScenario[scenario] = JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8'));
  }
  return byScenario;
}

/** The `scenario:check-id` entries of the expected-failures file (the suite's format, one per line). */
const expectedFailures = () =>
  new Set(
    readFileSync(EXPECTED_FAILURES, 'utf8')
      .split('\n')
      .map((line) => /^\s*-\s+([^\s#]+)/.exec(line)?.[1])
      .filter((entry) => entry !== undefined),
  );

/**
 * Judged as the suite's summary counts (a FAILURE fails; a WARNING, a SHOULD, is reported), not
 * as its --expected-failures does, which fails a run on every warning: the stateless design's
 * "no session id" warnings (docs/mcp.md#conformance) are no fixture of the suite's.
 */
function judge(byScenario: Record<string, { id: string; status: string }[]>, expected: Set<string>) {
  const unexpected: string[] = [];
  const stale: string[] = [];
  for (const [scenario, checks] of Object.entries(byScenario))
    for (const check of checks) {
      const entry = `${scenario}:${check.id}`;
      if (check.status === 'FAILURE' && !expected.has(entry)) unexpected.push(entry);
      if (check.status === 'SUCCESS' && expected.has(entry)) stale.push(entry);
    }
  return { unexpected, stale };
}

function outDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  outDirs.push(dir);
  return dir;
}

/**
 * The suite's MCP client sends no Authorization header and has no option for one; this endpoint
 * needs a key on every request. So the suite talks to a loopback proxy that adds the key's header
 * and passes everything else on as sent. An Origin naming the proxy itself becomes the stack's own
 * origin (what a reverse proxy in front of the API does): the DNS-rebinding scenario's foreign
 * `Origin: http://evil.example.com` still reaches the server unchanged and must be refused.
 */
async function keyedProxy(token: string) {
  const upstream = new URL(baseUrl());
  let own = '';
  const server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host, authorization: `Bearer ${token}` };
    if (headers.origin === own) headers.origin = upstream.origin;
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  own = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { mcpUrl: `${own}${API_BASE_PATH}/mcp`, close: () => new Promise((resolve) => server.close(resolve)) };
}

describe('the MCP conformance suite', () => {
  it('runs on a Node the suite supports', () => {
    const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
    expect(major > 22 || (major === 22 && minor >= 19), `Node ${process.versions.node}`).toBe(true);
  });

  it.concurrent.each([
    // Scenarios that must run, each passing every check the expected-failures file does not name.
    ['2026-07-28', ['server-stateless', 'tools-list', 'http-header-validation', 'dns-rebinding-protection', 'caching']],
    ['2025-11-25', ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection']],
  ])('passes the server scenarios of %s but the ones needing its own fixtures', async (version, musts) => {
    // A key of its own per run: the suite's calls count against the key's 60 a minute.
    const key = await createKey(await createStore());
    const proxy = await keyedProxy(key.token);
    const dir = outDir();
    try {
      const run = await conformance([
        'server',
        '--url',
        proxy.mcpUrl,
        '--suite',
        'all',
        '--spec-version',
        version,
        '-o',
        dir,
      ]).exited;
      const byScenario = results(dir, 'server-');
      // The suite exits 1 whenever a check fails, the fixtures' included: what decides is below,
      // once it has run every scenario to its summary.
      expect(run.out, `exit ${run.code}`).toContain('=== SUMMARY');
      const summary = run.out.slice(run.out.indexOf('=== SUMMARY'));
      expect(judge(byScenario, expectedFailures()), summary).toEqual({ unexpected: [], stale: [] });
      for (const scenario of musts) {
        const checks = byScenario[scenario] ?? [];
        expect(
          checks.some((c) => c.status === 'SUCCESS'),
          scenario,
        ).toBe(true);
      }
    } finally {
      await proxy.close();
    }
  });

  it.concurrent('passes the authorization-server scenarios, the store admin approving the request', async () => {
    const storeId = await createStore();
    const port = await freePort();
    // The suite's callback server listens on this port and sends this redirect URI.
    const registered = await fetch(`${root()}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        client_name: 'MCP conformance suite',
        redirect_uris: [`http://127.0.0.1:${port}/callback`],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(registered.status).toBe(201);
    const { client_id: clientId } = (await registered.json()) as { client_id: string };
    let authorizeUrl: (url: string) => void = () => {};
    const printed = new Promise<string>((resolve) => {
      authorizeUrl = resolve;
    });
    const dir = outDir();
    const run = conformance(
      [
        'authorization',
        '--url',
        root(),
        '--client-id',
        clientId,
        '--resource',
        `${baseUrl()}/mcp`,
        '--port',
        String(port),
        '-o',
        dir,
      ],
      (line) => {
        if (line.startsWith(`${root()}/oauth/authorize?`)) authorizeUrl(line.trim());
      },
    );
    try {
      // The suite prints the URL for a person to open; this is that person's browser and their store admin.
      const url = await Promise.race([
        printed,
        run.exited.then((r) => Promise.reject(new Error(`the suite ended before it asked: ${r.out}`))),
      ]);
      const page = await (await fetch(url)).text();
      const approvalCode = /id="approval-code" data-request="[^"]+">([^<]+)</.exec(page)?.[1];
      const poll = /fetch\("([^"]+)"/.exec(page)?.[1];
      expect(approvalCode, page).toBeDefined();
      await adminCommand('oauth approve', { code: approvalCode, store: storeId });
      const status = (await (await fetch(new URL(poll!, url))).json()) as { status: string; redirect?: string };
      expect(status.status).toBe('done');
      // The waiting page's navigation to the redirect URI: the suite's callback server takes the code.
      expect((await fetch(status.redirect!)).status).toBe(200);
      const done = await run.exited;
      expect(done.code, done.out).toBe(0);
    } finally {
      run.kill();
    }
    const byScenario = results(dir, 'authorization-server-');
    expect(Object.keys(byScenario).sort()).toEqual([
      'authorization-code-grant',
      'authorization-server-metadata-endpoint',
    ]);
    // Warnings too: the metadata's client_id_metadata_document_supported is a SHOULD the suite only warns about.
    for (const checks of Object.values(byScenario))
      for (const check of checks) expect(check, JSON.stringify(check)).toMatchObject({ status: 'SUCCESS' });
  });
});
