import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { lambdaInvoker } from '#bin/admin-invoke.ts';
import { baseUrl, createStore } from '#fixtures/api.ts';
import { chromiumMissing, launchBrowser } from '#fixtures/browser.ts';
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
 * The chat app's OAuth flow (test/integration/oauth-agent-e2e.test.ts) against the synthesized app
 * with IAM enforced: the official MCP client, the authorize page in Chromium, the store admin's
 * `npm run admin -- oauth approve ... --function NAME` through the Lambda API (the deployed path),
 * the token, tools/list, a refresh, then `keys revoke` and the gateway's 401 with the challenge.
 *
 * The gateway's 401 names the stage's own execute-api URL (joined at deploy time, infra/api-stack.ts),
 * which is not this machine: the app's fetch sends what it addresses there to the rehearsal, as DNS
 * would send it to API Gateway.
 */
const rehearsalUrl = inject('rehearsalUrl');
const adminFunction = inject('adminFunctionName');
const operator = {
  AWS_ENDPOINT_URL_LAMBDA: rehearsalUrl,
  AWS_ACCESS_KEY_ID: 'operator',
  AWS_SECRET_ACCESS_KEY: 'rehearsal',
  AWS_REGION: process.env.AWS_REGION || 'us-east-1',
};
// The in-process `keys revoke` below goes through the same Lambda API as the CLI's --function.
Object.assign(process.env, operator);
const STAGE_URL = /^https:\/\/[^./]+\.execute-api\.[a-z0-9-]+\.amazonaws\.com\/prod(?=\/)/;
const mcpUrl = () => `${baseUrl()}/mcp`;

describe.skipIf(chromiumMissing)('rehearsal: a chat app connects with OAuth and the store admin approves', () => {
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let page: Page;
  let receiver: Awaited<ReturnType<typeof startAppReceiver>>;
  beforeAll(async () => {
    browser = await launchBrowser();
    page = browser.context.pages()[0] ?? (await browser.context.newPage());
    receiver = await startAppReceiver('Rehearsal chat app');
  });
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
  });

  it('authorize → approval through the admin Lambda → token → tools/list → refresh → revoke → 401 with the challenge', async () => {
    expect(adminFunction).not.toBe('');
    const store = await createStore();
    const seen: Seen[] = [];
    const fetchFn = recordingFetch(seen, (url) => url.replace(STAGE_URL, rehearsalUrl));
    const provider = new AgentProvider(receiver.redirectUrl, 'Rehearsal chat app');
    const first = agent(mcpUrl(), provider, fetchFn);
    expect(await first.connect()).toBe('redirect');
    const challenge = seen.find((s) => s.url === mcpUrl() && s.status === 401)?.challenge;
    expect(challenge).toMatch(
      new RegExp(`^Bearer resource_metadata="${STAGE_URL.source.slice(1)}/\\.well-known/oauth-protected-resource`),
    );

    const code = await authorizeInBrowser(page, provider.authorizationUrl!, {
      clientName: 'Rehearsal chat app',
      redirectHost: new URL(receiver.redirectUrl).host,
    });
    // The admin Lambda's role reads the waiting requests (gsi1 query, BatchGetItem) under IAM: who
    // asks, self-registered, from which address; never the code, which the user reads out.
    const waiting = await lambdaInvoker(adminFunction)({ command: 'oauth requests', args: {} });
    expect(waiting.ok ? (waiting.data as { data: unknown[] }).data : waiting.error).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          client_id: provider.clientInformation()!.client_id,
          client_name: 'Rehearsal chat app',
          name_verified: false,
          ip: expect.any(String),
        }),
      ]),
    );
    expect(JSON.stringify(waiting)).not.toContain(code);
    const approved = (await adminCli(
      [
        'oauth',
        'approve',
        '--code',
        code,
        '--store',
        store,
        '--abilities',
        'catalog:read',
        '--function',
        adminFunction,
      ],
      operator,
    )) as { key_id: number };
    await first.transport.finishAuth(await callbackOf(receiver, page, receiver.redirectUrl));
    expect(provider.tokens()?.scope).toBe('catalog:read');

    const connected = agent(mcpUrl(), provider, fetchFn);
    expect(await connected.connect()).toBe('connected');
    const names = (await connected.client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_products');
    expect(names).not.toContain('upsert_product');

    // A refresh under the OAuth function's role: the refresh token and its successor in one
    // BatchGetItem, the rotation's transaction; the app goes on with the new pair.
    const refreshed = await fetchFn(`${rehearsalUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: provider.tokens()!.refresh_token!,
        client_id: provider.clientInformation()!.client_id,
      }),
    });
    expect(refreshed.status).toBe(200);
    provider.saveTokens((await refreshed.json()) as Parameters<typeof provider.saveTokens>[0]);
    expect((await connected.client.listTools()).tools.length).toBe(names.length);

    const revoked = await lambdaInvoker(adminFunction)({ command: 'keys revoke', args: { id: approved.key_id } });
    expect(revoked.ok).toBe(true);
    const count = seen.length;
    await expect(connected.client.listTools()).rejects.toThrow();
    const after = seen.slice(count).find((s) => s.url === mcpUrl());
    expect(after).toMatchObject({ status: 401 });
    expect(after?.challenge).toMatch(
      new RegExp(
        `^Bearer resource_metadata="${STAGE_URL.source.slice(1)}/\\.well-known/oauth-protected-resource${API_BASE_PATH.replace(/\//g, '\\/')}", error="invalid_token"$`,
      ),
    );
    await connected.client.close();
  });
});
