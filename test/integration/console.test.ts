import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as oauth from 'oauth4webapi';
import { describe, expect, inject, it } from 'vitest';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, baseUrl, client, createKey, createStore } from '#fixtures/api.ts';
import { waitFor } from '#fixtures/webhooks.ts';
import { consoleBrowserFlows } from '#fixtures/console-flows.ts';
import { startConsole } from '#bin/console/server.ts';
import { accessibilityProblems, chromiumMissing, launchBrowser } from '#fixtures/browser.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * The README's screenshots of docs/console/, retaken by this test when CONSOLE_SCREENSHOTS=1 (they
 * carry random store ids, so an ordinary run leaves the committed pictures alone); otherwise each
 * page is still photographed, into a temporary folder, so a failure to render shows up here too.
 */
const shots =
  process.env.CONSOLE_SCREENSHOTS === '1'
    ? path.resolve(import.meta.dirname, '../../docs/console')
    : mkdtempSync(path.join(tmpdir(), 'console-shots-'));

describe('admin commands behind the console', () => {
  it('keys requests refuses unknown keys and bad arguments; stores list takes none', async () => {
    const fail = async (command: string, args: Record<string, unknown>) => {
      const out = await admin({ command, args });
      return out.ok ? undefined : out.error;
    };
    expect(await fail('keys requests', { id: 99_999_999 })).toMatchObject({ code: 'not_found', field: 'id' });
    expect(await fail('keys requests', { id: 'abc' })).toMatchObject({ code: 'validation_failed', field: 'id' });
    expect(await fail('keys requests', {})).toMatchObject({ code: 'validation_failed', field: 'id' });
    const key = await createKey(await createStore(), ['catalog:read']);
    expect(await fail('keys requests', { id: key.id, limit: '0' })).toMatchObject({
      code: 'validation_failed',
      field: 'limit',
    });
    expect(await fail('stores list', { store: 'x' })).toMatchObject({ code: 'validation_failed' });
  });

  it("keys requests lists a key's requests newest first, with status and error code, and no other key's", async () => {
    const store = await createStore();
    const key = await createKey(store, ['catalog:read']);
    const other = await createKey(store, ['catalog:read']);
    expect((await client(key.token).get('/products')).status).toBe(200);
    expect((await client(key.token).get('/orders')).status).toBe(403);
    expect((await client(other.token).get('/products')).status).toBe(200);
    const rows = await waitFor('two logged requests', async () => {
      const out = await adminCommand<{
        data: { path: string; status: number; error_code: string | null; request_id: string }[];
      }>('keys requests', { id: key.id });
      return out.data.length === 2 ? out.data : undefined;
    });
    expect(rows.map((r) => [r.path.replace(/^.*integrations/, ''), r.status, r.error_code])).toEqual([
      ['/orders', 403, 'forbidden'],
      ['/products', 200, null],
    ]);
    expect(rows[0]!.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await adminCommand<{ data: { id: string }[] }>('stores list')).data.map((s) => s.id)).toContain(store);
  });
});

describe('npm run admin -- console', () => {
  it("prints a login address with this run's secret; the address logs in, a guess does not", {
    timeout: 120_000,
  }, async () => {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')),
    );
    const child = spawn('npm', ['run', 'admin', '--', 'console'], {
      env: { ...env, DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'), TABLE_NAME: inject('tableName') },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    try {
      const loginUrl = await waitFor(
        'the login address',
        () => /http:\/\/127\.0\.0\.1:\d+\/login\?secret=\S+/.exec(out)?.[0],
        90_000,
      );
      const login = await fetch(loginUrl, { redirect: 'manual' });
      expect(login.status).toBe(303);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const home = await fetch(new URL('/', loginUrl), { headers: { cookie } });
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('<h1>Stores</h1>');
      const guess = new URL(loginUrl);
      guess.searchParams.set('secret', 'x'.repeat(32));
      expect((await fetch(guess, { redirect: 'manual' })).status).toBe(403);
      // A malformed address is the user's mistake, not the console's: 400, and nothing on its terminal.
      const malformed = await fetch(new URL('/stores/%E0%A4%A', loginUrl), { headers: { cookie } });
      expect(malformed.status).toBe(400);
      expect(await malformed.text()).not.toMatch(/URIError|\bat /);
      expect(err).toBe('');
    } finally {
      // The npm wrapper and the console in it: their own process group, started here.
      process.kill(-child.pid!, 'SIGTERM');
    }
  });
});

describe('console addresses', () => {
  it('answers 400 to malformed percent-encoding and 404 to a key id that is not written canonically', async () => {
    const store = await createStore();
    const key = await createKey(store, ['catalog:read']);
    const app = await startConsole({ invoke: admin });
    try {
      const login = await fetch(app.loginUrl, { redirect: 'manual' });
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const get = async (path: string) => {
        const res = await fetch(`${app.origin}${path}`, { headers: { cookie }, redirect: 'manual' });
        return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
      };
      for (const path of ['/stores/%E0%A4%A', `/stores/${store}/keys/%`, `/stores/${store}/keys/${key.id}/%zz`]) {
        const res = await get(path);
        expect(res.status, path).toBe(400);
        expect(res.type, path).toMatch(/^text\/html/);
        expect(res.body, path).toContain('<h1>Bad address</h1>');
        expect(res.body, path).not.toMatch(/URIError|\bat /);
      }
      expect((await get(`/stores/${store}/keys/${key.id}`)).status).toBe(200);
      const id = key.id;
      for (const spelling of [
        `${id}.0`,
        `0x${id.toString(16)}`,
        `%20${id}`,
        `0${id}`,
        `+${id}`,
        `${id}e0`,
        `${id}%20`,
        '0',
        '-1',
      ]) {
        const res = await get(`/stores/${store}/keys/${spelling}`);
        expect(res.status, spelling).toBe(404);
        expect(res.body, spelling).toContain('<h1>Not found</h1>');
        expect((await get(`/stores/${store}/keys/${spelling}/deliveries`)).status, spelling).toBe(404);
      }
    } finally {
      await app.close();
    }
  });
});

consoleBrowserFlows('admin console in a browser', { invoke: () => admin, shots });

/**
 * An OAuth client starts an authorization through real HTTP on the local stack (as
 * test/integration/oauth.test.ts does), and the store admin decides its approval code in the console.
 */
const REDIRECT = 'http://127.0.0.1:9/callback';
/** The User-Agent of the user's browser that opens the authorize page: the admin is shown it. */
const USER_AGENT = 'Console test browser/1.0';
const insecure = { [oauth.allowInsecureRequests]: true };
const root = () => baseUrl().slice(0, -API_BASE_PATH.length);

async function startAuthorization(scope: string) {
  const registered = await fetch(`${root()}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Console chat app',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    }),
  });
  expect(registered.status).toBe(201);
  const client: oauth.Client = {
    client_id: ((await registered.json()) as { client_id: string }).client_id,
    token_endpoint_auth_method: 'none',
  };
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(`${root()}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    resource: baseUrl(),
    scope,
    state,
  }))
    url.searchParams.set(k, v);
  const res = await fetch(url, { headers: { 'User-Agent': USER_AGENT } });
  expect(res.status).toBe(200);
  const waiting = await res.text();
  const approvalCode = /id="approval-code" data-request="[^"]+">([^<]+)</.exec(waiting)![1]!;
  const statusUrl = new URL(/fetch\("([^"]+)"/.exec(waiting)![1]!, url).href;
  const poll = async () => (await (await fetch(statusUrl)).json()) as { status: string; redirect?: string };
  return { client, verifier, state, approvalCode, poll };
}

describe('oauth show', () => {
  it('names the client, whether its name is verified, who opened the page and what it asks, never the PKCE challenge or the secret', async () => {
    const started = await startAuthorization('catalog:read orders:read');
    const shown = await adminCommand<Record<string, unknown>>('oauth show', {
      code: started.approvalCode.toLowerCase(),
    });
    expect(shown).toEqual({
      approval_code: started.approvalCode,
      client_id: started.client.client_id,
      client_name: 'Console chat app',
      name_verified: false,
      name_verified_by: null,
      redirect_host: '127.0.0.1:9',
      ip: expect.stringMatching(/(^|:)127\.0\.0\.1$/),
      user_agent: USER_AGENT,
      created_at: expect.stringMatching(/Z$/),
      age_seconds: expect.any(Number),
      resource: baseUrl(),
      abilities: ['catalog:read', 'orders:read'],
      status: 'pending',
      expires_at: expect.stringMatching(/Z$/),
    });
    const out = await admin({ command: 'oauth show', args: { code: 'ABCD-EFGH' } });
    expect(out.ok ? undefined : out.error).toMatchObject({ code: 'not_found', field: 'code' });
  });
});

describe.skipIf(chromiumMissing)('approving an app in the console', { timeout: 120_000 }, () => {
  it('approves by the code the user reads out, with narrower abilities: the token carries exactly those', async () => {
    const store = await createStore();
    const started = await startAuthorization('catalog:read catalog:write orders:read');
    const app = await startConsole({ invoke: admin });
    const browser = await launchBrowser();
    try {
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      await page.goto(app.loginUrl);
      await page.getByRole('link', { name: 'Approve an app' }).click();
      // The list of waiting requests is an overview: who asks, unverified, from where; no code, nothing to approve.
      const row = page.locator('tbody tr', { hasText: started.client.client_id });
      const listed = (await row.textContent())!;
      expect(listed).toContain('Console chat app');
      expect(listed).toContain('unverified: self-registered');
      expect(listed).toContain(USER_AGENT);
      expect(listed).not.toContain(started.approvalCode);
      expect(await row.locator('a, button, input').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      expect(await accessibilityProblems(page)).toEqual([]);
      // The approval path: the code the user reads out from their own screen.
      await page.getByLabel('Approval code').fill(started.approvalCode);
      await page.getByRole('button', { name: 'Look up' }).click();
      const main = page.locator('main');
      await expect.poll(() => main.textContent()).toContain('Console chat app');
      const decision = (await main.textContent())!;
      for (const shown of ['127.0.0.1:9', started.client.client_id, 'unverified: self-registered', USER_AGENT])
        expect(decision).toContain(shown);
      expect(
        await page.getByRole('checkbox').evaluateAll((boxes) => boxes.map((b) => b.getAttribute('value'))),
      ).toEqual(['catalog:read', 'catalog:write', 'orders:read']);
      expect(await accessibilityProblems(page)).toEqual([]);
      expect(await page.content()).not.toContain(await oauth.calculatePKCECodeChallenge(started.verifier));
      await page.getByLabel('Store id').fill(store);
      await page.getByLabel('catalog:write').uncheck();
      await page.getByLabel('orders:read').uncheck();
      await page.getByLabel('MCP tools').selectOption('read-only');
      await page.getByLabel(/Writes per hour/).fill('100');
      // The approve form is good once: the page's form token is taken by this submit.
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => main.textContent()).toContain('Approved');
      expect(await main.textContent()).toContain('approved');
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);

      const done = await started.poll();
      expect(done.status).toBe('done');
      const issuer = new URL(root());
      const as = await oauth.processDiscoveryResponse(
        issuer,
        await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
      );
      const params = oauth.validateAuthResponse(as, started.client, new URL(done.redirect!), started.state);
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        started.client,
        oauth.None(),
        params,
        REDIRECT,
        started.verifier,
        { additionalParameters: { resource: baseUrl() }, ...insecure },
      );
      const tokens = await oauth.processAuthorizationCodeResponse(as, started.client, response);
      expect(tokens.scope).toBe('catalog:read');
      expect((await client(tokens.access_token).get('/products')).status).toBe(200);
      expect((await client(tokens.access_token).get('/orders')).status).toBe(403);
      const keys = await adminCommand<{ data: { name: string; abilities: string[] }[] }>('keys list', { store });
      expect(keys.data.filter((k) => k.name === 'oauth: Console chat app').map((k) => k.abilities)).toEqual([
        ['catalog:read'],
      ]);
    } finally {
      await browser.close();
      await app.close();
    }
  });

  it('denies an approval code, and refuses a store that does not exist without deciding anything', async () => {
    const started = await startAuthorization('catalog:read');
    const app = await startConsole({ invoke: admin });
    const browser = await launchBrowser();
    try {
      const page = browser.context.pages()[0] ?? (await browser.context.newPage());
      await page.goto(app.loginUrl);
      await page.goto(`${app.origin}/oauth?code=${started.approvalCode}`);
      const main = page.locator('main');
      await page.getByLabel('Store id').fill('no-such-store-here');
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect.poll(() => main.textContent()).toContain('not_found');
      expect(await started.poll()).toEqual({ status: 'pending' });
      await page.getByRole('button', { name: 'Deny' }).click();
      await expect.poll(() => main.textContent()).toContain('Denied');
      const done = await started.poll();
      expect(new URL(done.redirect!).searchParams.get('error')).toBe('access_denied');
    } finally {
      await browser.close();
      await app.close();
    }
  });
});
