import { newContext } from '#shared/context.ts';
import { auth, discoverAuthorizationServerMetadata, refreshAuthorization } from '@modelcontextprotocol/client';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it, type TestContext } from 'vitest';
import { exchangeToken } from '#app/oauth/token.ts';
import { startConsole, type RunningConsole } from '#bin/console/server.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, baseUrl, createStore } from '#fixtures/api.ts';
import { accessibilityProblems, chromiumMissing, launchBrowser } from '#fixtures/browser.ts';
import {
  AgentProvider,
  adminCli,
  agent,
  authorizeInBrowser,
  callbackOf,
  recordingFetch,
  startAppReceiver,
  type Seen,
} from '#fixtures/oauth-agent.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * A chat app connecting the way Claude or ChatGPT does (docs/mcp.md, docs/oauth.md), end to end
 * against the local stack: the official v2 MCP client with its OAuth provider gets a 401, discovers
 * the metadata, identifies itself (a Client ID Metadata Document, or RFC 7591 registration), opens
 * the authorize page in Chromium; the store admin approves the page's code, narrower than asked;
 * the page continues to the app's loopback redirect and the SDK exchanges the code. The first case
 * approves with the real admin CLI (`npm run admin -- oauth approve`), the others through the same
 * admin handler in this process: an npm, tsx and SDK start for each of the six was most of their
 * CPU. Then the grant's tools, refresh rotation and its replay (within the grace window and after
 * it), and a revocation in the console.
 * No assertion on the negotiated MCP revision: the test holds for the v1 and the v2 server.
 *
 * The cases share nothing but the browser, the console and, per mode, a store and a receiver: each
 * has its own grant and its own two tabs (the user's and the store admin's), so they run side by side.
 */
const root = () => baseUrl().slice(0, -API_BASE_PATH.length);
const mcpUrl = () => `${baseUrl()}/mcp`;
const metadataUrl = () => `${root()}/.well-known/oauth-protected-resource${API_BASE_PATH}`;
const APPROVED = ['catalog:read', 'orders:read'];
const WRITE_TOOLS = ['upsert_product', 'update_product', 'upsert_products', 'set_order_status', 'save_page'];

/** The CLI as the store admin runs it on the machine of `npm start`: against the stack's store. */
const cliEnv = () => ({
  DYNAMODB_ENDPOINT: inject('dynamodbEndpoint'),
  TABLE_NAME: inject('tableName'),
  WEBHOOK_SECRET_KEY_FILE: inject('webhookSecretKeyFile'),
});

type Key = { id: number; name: string; status: string; kind?: string; abilities: string[] };
const grantOf = async (store: string, id: number) =>
  (await adminCommand<{ data: Key[] }>('keys list', { store })).data.find((k) => k.id === id);

const modes = [
  { name: 'a Client ID Metadata Document', clientName: 'Metadata chat app', metadataDocument: true },
  { name: 'dynamic client registration', clientName: 'Registered chat app', metadataDocument: false },
] as const;

describe.skipIf(chromiumMissing)('OAuth end to end: the MCP SDK client, a browser and the store admin', () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  let consoleApp: RunningConsole;

  beforeAll(async () => {
    browser = await launchBrowser();
    context = browser.context;
    consoleApp = await startConsole({ invoke: (event) => admin(event) });
    // The store admin signs in to the console once; every admin tab of the context has the session.
    const login = context.pages()[0] ?? (await context.newPage());
    await login.goto(consoleApp.loginUrl);
  });
  afterAll(async () => {
    await browser?.close();
    await consoleApp?.close();
  });

  for (const mode of modes) {
    describe.concurrent(`with ${mode.name}`, () => {
      let store: string;
      let receiver: Awaited<ReturnType<typeof startAppReceiver>>;
      beforeAll(async () => {
        store = await createStore();
        receiver = await startAppReceiver(mode.clientName);
      });
      afterAll(() => receiver?.close());

      /**
       * One app's whole way to a grant: 401, discovery, identification, the page, the admin's
       * approval of `abilities` (by the CLI or the handler it runs), the redirect, the SDK's token
       * exchange; then a connected client.
       */
      async function connectApp(
        abilities: string[],
        { onTestFinished }: TestContext,
        approveWith: 'cli' | 'handler' = 'handler',
      ) {
        const page = await context.newPage();
        /** The store admin's browser tab, beside the user's. */
        const adminPage = await context.newPage();
        onTestFinished(async () => {
          await page.close();
          await adminPage.close();
        });
        const seen: Seen[] = [];
        const fetchFn = recordingFetch(seen);
        // The SDK's own metadata-document branch takes https client ids only; on loopback the app
        // hands its document's URL over as the client id it has, which the stack fetches the same way.
        const provider = new AgentProvider(
          receiver.redirectUrl,
          mode.clientName,
          mode.metadataDocument ? { client_id: receiver.metadataDocumentUrl, issuer: root() } : undefined,
        );
        const first = agent(mcpUrl(), provider, fetchFn);
        expect(await first.connect()).toBe('redirect');
        const url = provider.authorizationUrl!;
        expect(url.href.startsWith(`${root()}/oauth/authorize?`)).toBe(true);
        expect(url.searchParams.get('code_challenge_method')).toBe('S256');

        const code = await authorizeInBrowser(page, url, {
          clientName: mode.clientName,
          redirectHost: new URL(receiver.redirectUrl).host,
        });
        // The console lists who is asking (its name verified by the metadata document's host, or
        // self-registered), with no code: the user reads the code out, and the admin looks it up.
        await adminPage.goto(`${consoleApp.origin}/oauth`);
        const clientId = provider.clientInformation()!.client_id;
        // (The cases run side by side: with a metadata document, their rows are alike but for IP, User-Agent and age.)
        const rows = await adminPage.locator('tbody tr', { hasText: clientId }).allTextContents();
        expect(rows.length).toBeGreaterThan(0);
        for (const waiting of rows) {
          expect(waiting).toContain(mode.clientName);
          expect(waiting).toContain(
            mode.metadataDocument ? `verified: published by ${new URL(clientId).host}` : 'unverified: self-registered',
          );
          expect(waiting).not.toContain(code);
        }
        expect(await accessibilityProblems(adminPage)).toEqual([]);
        await adminPage.getByLabel('Approval code').fill(code);
        await adminPage.getByRole('button', { name: 'Look up' }).click();
        await adminPage.getByRole('heading', { name: `Request ${code}` }).waitFor();
        expect(await adminPage.locator('main').textContent()).toContain(clientId);
        expect(await adminPage.locator('main').textContent()).toContain(new URL(receiver.redirectUrl).host);

        const approved = (
          approveWith === 'cli'
            ? await adminCli(
                ['oauth', 'approve', '--code', code, '--store', store, '--abilities', abilities.join(',')],
                cliEnv(),
              )
            : await adminCommand('oauth approve', { code, store, abilities: abilities.join(',') })
        ) as { key_id: number; abilities: string[] };
        expect(approved.abilities).toEqual(abilities);
        const callback = await callbackOf(receiver, page, receiver.redirectUrl);
        expect(callback.get('state')).toBe(provider.state());
        expect(callback.get('iss')).toBe(root());
        await first.transport.finishAuth(callback);
        expect(provider.tokens()?.scope).toBe(abilities.join(' '));

        const connected = agent(mcpUrl(), provider, fetchFn);
        expect(await connected.connect()).toBe('connected');
        return {
          adminPage,
          provider,
          seen,
          fetchFn,
          keyId: approved.key_id,
          client: connected.client,
          clientId: provider.clientInformation()!.client_id,
        };
      }

      it('connects after the admin approves narrower abilities; the grant holds only those tools', async (ctx) => {
        const { seen, client, keyId, clientId } = await connectApp(
          APPROVED,
          ctx,
          mode.metadataDocument ? 'cli' : 'handler',
        );
        // 401 with the challenge → RFC 9728 → RFC 8414 → registration (or none) → token.
        const unauthorized = seen.find((s) => s.url === mcpUrl() && s.status === 401);
        expect(unauthorized?.challenge).toBe(`Bearer resource_metadata="${metadataUrl()}"`);
        const paths = seen.map((s) => `${s.method} ${new URL(s.url).pathname}`);
        expect(paths).toContain(`GET /.well-known/oauth-protected-resource${API_BASE_PATH}`);
        expect(paths).toContain('GET /.well-known/oauth-authorization-server');
        expect(paths.includes('POST /oauth/register')).toBe(!mode.metadataDocument);
        expect(paths).toContain('POST /oauth/token');
        if (mode.metadataDocument) expect(clientId).toBe(receiver.metadataDocumentUrl);
        else expect(clientId).toMatch(/^oc_/);

        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toEqual(expect.arrayContaining(['list_products', 'list_orders']));
        for (const write of WRITE_TOOLS) expect(names).not.toContain(write);
        expect(names).not.toContain('list_pages');

        // A write outside the grant: refused, and nothing was written.
        const refused = await client.callTool({
          name: 'upsert_product',
          arguments: { external_id: 'agent-1', name: 'Sneaky', price: 100 },
        });
        expect(refused.isError).toBe(true);
        expect(JSON.stringify(refused.structuredContent)).toContain('forbidden');
        const products = await client.callTool({ name: 'list_products', arguments: {} });
        expect(JSON.stringify(products.structuredContent)).not.toContain('Sneaky');

        expect(await grantOf(store, keyId)).toMatchObject({
          name: `oauth: ${mode.clientName}`,
          kind: 'grant',
          client_id: clientId,
          status: 'active',
          abilities: APPROVED,
        });
        await client.close();
      });

      it('rotates the refresh token; a replayed one answers the new pair for 30 s, then revokes the grant', async (ctx) => {
        const { provider, seen, fetchFn, client, keyId } = await connectApp(APPROVED, ctx);
        const before = provider.tokens()!;
        // What the SDK does when it holds a refresh token and needs a fresh access token.
        expect(await auth(provider, { serverUrl: mcpUrl(), fetchFn })).toBe('AUTHORIZED');
        const refreshed = provider.tokens()!;
        expect(refreshed.refresh_token).toBeDefined();
        expect(refreshed.refresh_token).not.toBe(before.refresh_token);
        expect(refreshed.access_token).not.toBe(before.access_token);
        expect(seen.at(-1)).toMatchObject({ method: 'POST', url: `${root()}/oauth/token`, status: 200 });
        expect((await client.listTools()).tools.length).toBeGreaterThan(0);

        // The rotated-away refresh token within the window (a parallel refresh that lost the
        // race): the same new pair, and the grant stays.
        const late = await refreshAuthorization(root(), {
          metadata: await discoverAuthorizationServerMetadata(root(), { fetchFn }),
          clientInformation: provider.clientInformation()!,
          refreshToken: before.refresh_token!,
          fetchFn,
        });
        expect(late).toMatchObject({ access_token: refreshed.access_token, refresh_token: refreshed.refresh_token });
        expect((await grantOf(store, keyId))?.status).toBe('active');
        // After the window (the token endpoint in-process, at a later clock): a reuse. The grant
        // ends, access and refresh tokens at once.
        const replay = await exchangeToken(
          newContext(),
          {
            grant_type: 'refresh_token',
            refresh_token: before.refresh_token!,
            client_id: provider.clientInformation()!.client_id,
          },
          root(),
          API_BASE_PATH,
          Date.now() + 31_000,
        );
        expect(replay).toMatchObject({ ok: false, error: 'invalid_grant' });
        expect((await grantOf(store, keyId))?.status).toBe('revoked');
        const count = seen.length;
        await expect(client.listTools()).rejects.toThrow();
        const after = seen.slice(count).find((s) => s.url === mcpUrl());
        expect(after).toMatchObject({ status: 401 });
        expect(after?.challenge).toBe(`Bearer resource_metadata="${metadataUrl()}", error="invalid_token"`);
        await client.close();
      });

      it('a second grant revoked on the console keys page stops the next MCP call with a 401', async (ctx) => {
        const { adminPage, seen, client, keyId } = await connectApp(['catalog:read'], ctx);
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('list_products');

        await adminPage.goto(`${consoleApp.origin}/`);
        await adminPage.getByRole('link', { name: `Keys of ${store}` }).click();
        const row = adminPage.locator('tbody tr', { hasText: `oauth: ${mode.clientName}` });
        expect(await row.count()).toBeGreaterThan(0);
        await adminPage.goto(`${consoleApp.origin}/stores/${store}/keys/${keyId}`);
        await adminPage.getByRole('link', { name: 'Revoke key…' }).click();
        await adminPage.getByRole('button', { name: 'Yes, revoke key' }).click();
        expect(await adminPage.locator('.notice').textContent()).toContain('Key revoked');

        const count = seen.length;
        await expect(client.listTools()).rejects.toThrow();
        const after = seen.slice(count).find((s) => s.url === mcpUrl());
        expect(after).toMatchObject({ status: 401 });
        expect(after?.challenge).toContain('error="invalid_token"');
        await client.close();
      });
    });
  }
});
