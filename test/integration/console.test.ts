import { spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { handler as admin } from '../../functions/admin/handler.ts';
import { startConsole, type RunningConsole } from '../../bin/console/server.ts';
import { adminCommand, client, createKey, createStore } from '../fixtures/api.ts';
import { orderFile } from '../fixtures/orders.ts';
import { startReceiver, waitFor } from '../fixtures/webhooks.ts';
import { accessibilityProblems, chromiumMissing, launchBrowser } from '../fixtures/browser.ts';

/**
 * The README's screenshots of docs/console/, retaken by this test when CONSOLE_SCREENSHOTS=1 (they
 * carry random store ids, so an ordinary run leaves the committed pictures alone); otherwise each
 * page is still photographed, into a temporary folder, so a failure to render shows up here too.
 */
const shots = process.env.CONSOLE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/console') : mkdtempSync(path.join(tmpdir(), 'console-shots-'));
type Key = { id: number; status: string; events: string[] };
const keyOf = async (store: string, id: number) => (await adminCommand<{ data: Key[] }>('keys list', { store })).data.find((k) => k.id === id)!;

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
    expect(await fail('keys requests', { id: key.id, limit: '0' })).toMatchObject({ code: 'validation_failed', field: 'limit' });
    expect(await fail('stores list', { store: 'x' })).toMatchObject({ code: 'validation_failed' });
  });

  it('keys requests lists a key\'s requests newest first, with status and error code, and no other key\'s', async () => {
    const store = await createStore();
    const key = await createKey(store, ['catalog:read']);
    const other = await createKey(store, ['catalog:read']);
    expect((await client(key.token).get('/products')).status).toBe(200);
    expect((await client(key.token).get('/orders')).status).toBe(403);
    expect((await client(other.token).get('/products')).status).toBe(200);
    const rows = await waitFor('two logged requests', async () => {
      const out = await adminCommand<{ data: { path: string; status: number; error_code: string | null; request_id: string }[] }>('keys requests', { id: key.id });
      return out.data.length === 2 ? out.data : undefined;
    });
    expect(rows.map((r) => [r.path.replace(/^.*integrations/, ''), r.status, r.error_code])).toEqual([['/orders', 403, 'forbidden'], ['/products', 200, null]]);
    expect(rows[0]!.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await adminCommand<{ data: { id: string }[] }>('stores list')).data.map((s) => s.id)).toContain(store);
  });
});

describe('npm run admin -- console', () => {
  it('prints a login address with this run\'s secret; the address logs in, a guess does not', { timeout: 120_000 }, async () => {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_config_')));
    const child = spawn('npm', ['run', 'admin', '--', 'console'], {
      env: { ...env, DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'), TABLE_NAME: inject('tableName') },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const loginUrl = await waitFor('the login address', () => /http:\/\/127\.0\.0\.1:\d+\/login\?secret=\S+/.exec(out)?.[0], 90_000);
      const login = await fetch(loginUrl, { redirect: 'manual' });
      expect(login.status).toBe(303);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const home = await fetch(new URL('/', loginUrl), { headers: { cookie } });
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('<h1>Stores</h1>');
      const guess = new URL(loginUrl);
      guess.searchParams.set('secret', 'x'.repeat(32));
      expect((await fetch(guess, { redirect: 'manual' })).status).toBe(403);
    } finally {
      // The npm wrapper and the console in it: their own process group, started here.
      process.kill(-child.pid!, 'SIGTERM');
    }
  });
});

describe.skipIf(chromiumMissing)('admin console in a browser', { timeout: 120_000 }, () => {
  let consoleApp: RunningConsole;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  let page: Page;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let failing = false;
  let store: string;
  let keyId: number;
  let token: string;
  const problems: string[] = [];

  /** Every page: no console error, no serious or critical axe violation, no sideways scroll at 390 px. */
  async function checkPage(shot?: string) {
    await page.waitForLoadState('load');
    expect(await accessibilityProblems(page), page.url()).toEqual([]);
    if (shot) await page.screenshot({ path: path.join(shots, `${shot}.png`), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${page.url()} fits 390 px`).toBe(true);
    await page.setViewportSize({ width: 1280, height: 900 });
    expect(problems).toEqual([]);
  }
  const cell = async (eventId: string, column: string) => {
    const headers = await page.locator('thead th').allTextContents();
    return (await page.locator('tbody tr', { hasText: eventId }).locator('td').nth(headers.indexOf(column)).textContent())?.trim();
  };
  /** Reloads until `probe` is true: deliveries and log lines arrive on their own time. */
  const reloadUntil = (what: string, probe: () => Promise<boolean>) =>
    waitFor(what, async () => (await probe()) || (await page.reload(), false), 30_000, 250);

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    receiver = await startReceiver(() => ({ status: failing ? 500 : 204 }));
    store = await createStore();
    consoleApp = await startConsole({ invoke: admin });
    browser = await launchBrowser();
    context = browser.context;
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    // Nothing leaves the machine: any request not to the console is a failure.
    await context.route('**/*', (route) => (route.request().url().startsWith(consoleApp.origin) ? route.continue() : (problems.push(`external: ${route.request().url()}`), route.abort())));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
    await receiver?.close();
  });

  it('creates a key with two abilities and shows its token and webhook secret once', async () => {
    await page.goto(consoleApp.loginUrl);
    expect(page.url()).toBe(`${consoleApp.origin}/`);
    await checkPage('stores');
    await page.getByRole('link', { name: `Keys of ${store}` }).click();
    await checkPage();
    await page.getByRole('link', { name: 'Create a key' }).click();
    await page.getByLabel('Name').fill('crm');
    await page.getByLabel('catalog:read').check();
    await page.getByLabel('orders:read').check();
    await page.getByLabel('Webhook URL').fill(receiver.url);
    await checkPage('new-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    token = (await page.locator('#token').textContent())!;
    expect(token).toMatch(/^sia_/);
    expect(await page.locator('#webhook-secret').textContent()).toMatch(/^whsec_/);
    await checkPage('key-created');
    await page.getByRole('button', { name: 'Copy token' }).click();
    await waitFor('the copy notice', async () => /Cop|Select/.test((await page.locator('#live').textContent()) ?? ''));
    keyId = Number(/Key (\d+)/.exec((await page.locator('nav').textContent())!)![1]);
    await page.getByRole('link', { name: `Back to key ${keyId}` }).click();
    expect(await page.content()).not.toContain(token);
    const dd = await page.locator('dl').textContent();
    expect(dd).toContain('catalog:read, orders:read');
    await checkPage('key');
  });

  it('shows a request made with the token in the key\'s request list', async () => {
    const res = await client(token).get('/products');
    expect(res.status).toBe(200);
    await page.getByRole('link', { name: 'Recent requests' }).click();
    await reloadUntil('the request on the page', async () => (await page.locator('tbody tr').count()) > 0);
    expect(await page.locator('tbody tr').first().textContent()).toMatch(/GET.*\/api\/v1\/integrations\/products.*200/);
    await checkPage('requests');
  });

  it('shows a delivery; redelivers from the page and shows the failed second attempt; pings', async () => {
    const order = await adminCommand<{ reference: string }>('orders place', { store, file: orderFile() });
    expect(order.reference).toMatch(/^ORD-/);
    await page.goto(`${consoleApp.origin}/stores/${store}/keys/${keyId}/deliveries`);
    await reloadUntil('the delivery', async () => (await page.locator('tbody tr', { hasText: 'delivered' }).count()) === 1);
    const eventId = (await page.locator('tbody tr td').first().textContent())!.trim();
    expect(eventId).toMatch(/^evt_/);
    expect(await cell(eventId, 'attempts')).toBe('1');
    await checkPage('deliveries');

    failing = true;
    await page.locator('tbody tr', { hasText: eventId }).getByRole('button', { name: 'Redeliver' }).click();
    expect(await page.locator('.notice.done').textContent()).toContain('Redelivery queued');
    await reloadUntil('the second attempt', async () => Number(await cell(eventId, 'attempts')) >= 2);
    expect(await cell(eventId, 'last status code')).toBe('500');
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === eventId).length).toBeGreaterThanOrEqual(2);
    failing = false;

    await page.getByRole('button', { name: 'Send a test ping' }).click();
    expect(await page.locator('.notice').textContent()).toMatch(/HTTP 204 in \d+ ms/);
    await checkPage();
  });

  it('sets the webhook events, then rotates and revokes only after a confirmation', async () => {
    await page.goto(`${consoleApp.origin}/stores/${store}/keys/${keyId}`);
    await page.getByLabel('order.paid').uncheck();
    await page.getByRole('button', { name: 'Save webhook' }).click();
    expect(await page.locator('.notice').textContent()).toContain('Webhook saved');
    expect((await keyOf(store, keyId)).events).toEqual(['order.created', 'order.status_changed']);

    await page.getByRole('link', { name: 'Rotate token…' }).click();
    await checkPage('confirm');
    expect((await client(token).get('/products')).status).toBe(200); // asking changed nothing
    await page.getByRole('button', { name: 'Yes, rotate token' }).click();
    const rotated = (await page.locator('#token').textContent())!;
    expect((await client(token).get('/products')).status).toBe(401);
    expect((await client(rotated).get('/products')).status).toBe(200);
    await checkPage();

    await page.getByRole('link', { name: `Back to key ${keyId}` }).click();
    await page.getByRole('link', { name: 'Revoke key…' }).click();
    expect((await keyOf(store, keyId)).status).toBe('active');
    await page.getByRole('button', { name: 'Yes, revoke key' }).click();
    expect(await page.locator('.notice').textContent()).toContain('Key revoked');
    expect((await keyOf(store, keyId)).status).toBe('revoked');
    expect((await client(rotated).get('/products')).status).toBe(401);
    await checkPage();
  });

  it('answers 403 and changes nothing without the secret, with a foreign Origin or Host, or without the form token', async () => {
    const victim = await createKey(store, ['catalog:read']);
    const login = await fetch(consoleApp.loginUrl, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    expect(login.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict/);
    const keyPage = await (await fetch(`${consoleApp.origin}/stores/${store}/keys/${victim.id}`, { headers: { cookie } })).text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(keyPage)![1]!;
    const revoke = (headers: Record<string, string>, body = `csrf=${encodeURIComponent(csrf)}`) =>
      send('POST', `/stores/${store}/keys/${victim.id}/revoke`, { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body);
    const send = (method: string, urlPath: string, headers: Record<string, string>, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const req = httpRequest(`${consoleApp.origin}${urlPath}`, { method, headers }, (res) => (res.resume(), resolve(res.statusCode!)));
        req.on('error', reject);
        req.end(body);
      });
    const port = new URL(consoleApp.origin).port;

    expect(await send('GET', '/', {})).toBe(403);
    expect(await send('GET', '/login?secret=wrong', {})).toBe(403);
    expect(await send('GET', '/', { cookie: 'console_session=guess' })).toBe(403);
    expect(await send('GET', '/', { cookie, host: `rebound.example:${port}` })).toBe(403);
    expect(await send('GET', '/', { cookie })).toBe(200);
    expect(await revoke({})).toBe(403); // no cookie
    expect(await revoke({ cookie, origin: 'http://evil.example' })).toBe(403);
    expect(await revoke({ cookie, origin: `http://127.0.0.1:${Number(port) + 1}` })).toBe(403);
    expect(await revoke({ cookie, 'sec-fetch-site': 'cross-site' })).toBe(403);
    expect(await revoke({ cookie }, 'csrf=wrong')).toBe(403);
    expect(await revoke({ cookie, host: `rebound.example:${port}`, origin: `http://rebound.example:${port}` })).toBe(403);
    expect((await keyOf(store, victim.id)).status).toBe('active');
    expect((await client(victim.token).get('/products')).status).toBe(200);
    // The same request from the console's own origin is what a real click sends: it works.
    expect(await revoke({ cookie, origin: consoleApp.origin })).toBe(303);
    expect((await keyOf(store, victim.id)).status).toBe('revoked');
  });
});

if (chromiumMissing) process.stderr.write(`${chromiumMissing}\n`);
