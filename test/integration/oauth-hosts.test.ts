import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as oauthHandler } from '#functions/oauth/handler.ts';
import { adminCommand, baseUrl, createStore } from '#fixtures/api.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';
import type { HostFixture } from '#fixtures/hosts/host.ts';
import { HOSTS } from '#fixtures/hosts/index.ts';
import { standInPublicDocuments } from '#fixtures/hosts/stand-in.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * Each MCP host's OAuth flow as its own documentation describes it (test/fixtures/hosts/*.ts,
 * docs/oauth.md#hosts), end to end against the local stack: it identifies itself, opens the
 * authorize page, the store admin approves the page's code through the admin handler, the page's
 * poll hands over the code, the host redeems it with its verifier and calls a tool with the token.
 *
 * A host with a Client ID Metadata Document at a public URL opens the authorize page on the OAuth
 * handler in this process, where test/fixtures/hosts/stand-in.ts serves that URL behind the
 * server's own pinned fetch (the local stack cannot reach claude.ai, and nothing may leave the
 * machine); the request it stores is the stack's, as every other step is over HTTP.
 */
const root = () => baseUrl().slice(0, -API_BASE_PATH.length);
const resourceOf = (host: HostFixture) =>
  host.resource === 'none' ? undefined : host.resource === 'mcp' ? `${baseUrl()}/mcp` : baseUrl();

let restore: () => Promise<void> = async () => {};
let storeId: string;
beforeAll(async () => {
  storeId = await createStore();
  restore = await standInPublicDocuments(
    HOSTS.flatMap((h) => ('metadataDocument' in h.client ? [h.client.metadataDocument] : [])),
  );
});
afterAll(() => restore());

/** The authorize page, as the host's browser opens it: over HTTP, or for a public CIMD in-process. */
async function openAuthorizePage(query: Record<string, string>, inProcess: boolean) {
  const url = new URL(`${root()}/oauth/authorize`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  if (!inProcess) {
    const res = await fetch(url, { redirect: 'manual' });
    return { status: res.status, page: await res.text(), url };
  }
  const out = await oauthHandler(
    gatewayEvent(
      {
        resource: '/oauth/authorize',
        path: '/oauth/authorize',
        headers: { 'x-forwarded-proto': 'http' },
        queryStringParameters: query,
      },
      { domainName: url.host, path: '/oauth/authorize' },
    ),
    {} as never,
  );
  return { status: out.statusCode, page: out.body, url };
}

describe('OAuth: every host connects on the first try', () => {
  it.each(HOSTS.map((h) => [h.name, h] as const))('%s: approved by the store admin, calls a tool', async (_, host) => {
    let clientId: string;
    if ('registration' in host.client) {
      const res = await fetch(`${root()}/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(host.client.registration),
      });
      const body = (await res.json()) as { client_id: string };
      expect(res.status, JSON.stringify(body)).toBe(201);
      clientId = body.client_id;
    } else clientId = host.client.metadataDocument.client_id;

    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const resource = resourceOf(host);
    const opened = await openAuthorizePage(
      {
        response_type: 'code',
        client_id: clientId,
        redirect_uri: host.redirectUri,
        code_challenge: createHash('sha256').update(verifier).digest('base64url'),
        code_challenge_method: 'S256',
        state,
        ...(host.scope ? { scope: host.scope } : {}),
        ...(resource ? { resource } : {}),
      },
      'metadataDocument' in host.client,
    );
    expect(opened.status, opened.page).toBe(200);
    const approvalCode = /id="approval-code" data-request="[^"]+">([^<]+)</.exec(opened.page)?.[1];
    const poll = /fetch\("([^"]+)"/.exec(opened.page)?.[1];

    // The admin checks what the page shows the user before approving: the host's name.
    const shown = await adminCommand<{ client_name: string }>('oauth show', { code: approvalCode });
    const name =
      'registration' in host.client ? host.client.registration.client_name : host.client.metadataDocument.client_name;
    expect(shown.client_name).toBe(name);
    await adminCommand('oauth approve', { code: approvalCode, store: storeId, abilities: 'catalog:read' });

    const status = (await (await fetch(new URL(poll!, opened.url))).json()) as { status: string; redirect?: string };
    expect(status.status).toBe('done');
    const redirect = new URL(status.redirect!);
    // The browser goes back to the very redirect URI the host sent, with the code, its state and RFC 9207's iss.
    expect(status.redirect!.split('?')[0]).toBe(new URL(host.redirectUri).href);
    expect(redirect.searchParams.get('state')).toBe(state);
    expect(redirect.searchParams.get('iss')).toBe(root());

    const token = await fetch(`${root()}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: redirect.searchParams.get('code')!,
        redirect_uri: host.redirectUri,
        code_verifier: verifier,
        client_id: clientId,
        ...(resource ? { resource } : {}),
      }),
    });
    const tokens = (await token.json()) as { access_token: string; refresh_token: string; scope: string };
    expect(token.status, JSON.stringify(tokens)).toBe(200);
    expect(tokens.scope).toBe('catalog:read');

    const call = await fetch(`${baseUrl()}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${tokens.access_token}`,
        Accept: 'application/json, text/event-stream',
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'list_products', arguments: { limit: 1 } },
      }),
    });
    const answer = (await call.json()) as { result?: { isError?: boolean; structuredContent?: { data?: unknown[] } } };
    expect(call.status, JSON.stringify(answer)).toBe(200);
    expect(answer.result?.isError, JSON.stringify(answer)).toBeFalsy();
    expect(answer.result?.structuredContent?.data).toEqual([]);
  });
});
