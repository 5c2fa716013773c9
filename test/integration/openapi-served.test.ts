import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from '#http/api-routes.ts';
import { baseUrl, client, storeWithKey } from '#fixtures/api.ts';
import { checkContract, ContractViolation } from '#fixtures/contract.ts';
import { chromiumMissing, launchBrowser } from '#fixtures/browser.ts';

const run = promisify(execFile);

describe('GET {base}/openapi.json and {base}/docs', () => {
  it('serves the OpenAPI 3.1 document without a key, with every path of the API and this server as its server', async () => {
    const res = await fetch(`${baseUrl()}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const doc = (await res.json()) as {
      openapi: string;
      servers: { url: string }[];
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.servers[0]!.url).toBe(baseUrl());
    for (const route of API_ROUTES)
      expect(doc.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
  });

  it('serves the reference page, which loads the document and the renderer from this server only (no CDN)', async () => {
    const res = await fetch(`${baseUrl()}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    const sources = [...html.matchAll(/(?:src|href|spec-url)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources).toEqual(
      expect.arrayContaining(['/api/v1/integrations/openapi.json', '/api/v1/integrations/docs/redoc.standalone.js']),
    );
    for (const source of sources) {
      expect(source.startsWith('/'), `${source} is not served locally`).toBe(true);
      const asset = await fetch(new URL(source, baseUrl()));
      expect(asset.status, source).toBe(200);
      expect((await asset.arrayBuffer()).byteLength, source).toBeGreaterThan(1000);
    }
  });

  // The DOM check above always runs; this one renders the page for real where Chromium is
  // installed (.ci/run installs Debian's chromium), and says in the output why when it is not.
  const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
  it('renders every operation in headless Chromium', async (ctx) => {
    ctx.skip(
      !chromium,
      'no Chromium at /usr/bin/chromium or /usr/bin/chromium-browser: install it (apt-get install chromium) to render the page',
    );
    const profile = mkdtempSync(path.join(tmpdir(), 'chromium-'));
    try {
      // A fresh profile and nothing that reaches the network on its own: the page is loopback only.
      const flags = [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${profile}`,
      ];
      const { stdout } = await run(
        chromium!,
        [...flags, '--virtual-time-budget=15000', '--dump-dom', `${baseUrl()}/docs`],
        { maxBuffer: 50 * 1024 * 1024, timeout: 150_000 },
      );
      for (const summary of ['List products', "Change an order's status", 'Save a page as draft'])
        expect(stdout).toContain(summary);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  }, 180_000);
});

describe('{base}/docs offline', () => {
  it('loads nothing from outside 127.0.0.1 while it renders (no CDN logo)', async (ctx) => {
    ctx.skip(chromiumMissing !== undefined, chromiumMissing);
    const browser = await launchBrowser();
    try {
      const page = await browser.context.newPage();
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      await page.goto(`${baseUrl()}/docs`);
      // Rendered: the last operation's summary is on the page, and with it the side menu and its footer.
      await page.getByText('Save a page as draft').first().waitFor({ state: 'attached', timeout: 120_000 });
      await page.waitForLoadState('networkidle', { timeout: 120_000 });
      const outside = requested.filter((url) => !['127.0.0.1', ''].includes(new URL(url).hostname));
      expect(requested.length).toBeGreaterThan(1);
      expect(outside).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 180_000);
});

describe('the contract check of the test client', () => {
  it('fails a request the document does not describe, unless the test says it is one on purpose', async () => {
    const { key } = await storeWithKey();
    await expect(client(key.token).get('/no-such-endpoint')).rejects.toThrow(ContractViolation);
    await expect(client(key.token).request('DELETE', '/products')).rejects.toThrow(/does not describe/);
    expect((await client(key.token, { undocumented: true }).get('/no-such-endpoint')).status).toBe(404);
  });

  it('fails an answer whose body or status the document does not describe', () => {
    const url = `${baseUrl()}/products/1`;
    const headers = new Headers({ 'X-Request-Id': 'req-1' });
    expect(() =>
      checkContract(
        { method: 'GET', url },
        { status: 404, headers: new Headers(), text: JSON.stringify({ code: 'not_found', message: 'x', field: null }) },
      ),
    ).toThrow(/required header X-Request-Id/);
    expect(() =>
      checkContract({ method: 'GET', url }, { status: 200, headers, text: JSON.stringify({ data: { id: 1 } }) }),
    ).toThrow(/does not match/);
    expect(() =>
      checkContract(
        { method: 'GET', url },
        { status: 404, headers, text: JSON.stringify({ code: 'slug_taken', message: 'x', field: null }) },
      ),
    ).toThrow(/does not match/);
    expect(() => checkContract({ method: 'GET', url }, { status: 418, headers, text: '{}' })).toThrow(/status not in/);
    expect(() =>
      checkContract(
        { method: 'GET', url },
        { status: 404, headers, text: JSON.stringify({ code: 'not_found', message: 'x', field: null }) },
      ),
    ).not.toThrow();
  });
});
