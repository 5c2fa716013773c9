import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as oauthHandler } from '#functions/oauth/handler.ts';
import { adminCommand, baseUrl, createStore } from '#fixtures/api.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';
import type { HostFixture } from '#fixtures/hosts/host.ts';
import { HOSTS } from '#fixtures/hosts/index.ts';
import { standInPublicDocuments } from '#fixtures/hosts/stand-in.ts';
import { WELL_KNOWN_RESOURCE, WELL_KNOWN_SERVER } from '#domain/oauth/oauth.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * Each MCP host's OAuth flow as its own documentation describes it (test/fixtures/hosts/*.ts,
 * docs/oauth.md#hosts), end to end against the local stack: it reads the metadata a host reads
 * (the 401's challenge, the protected-resource document, the authorization server's), identifies
 * itself, opens the authorize page, the store admin approves the page's code through the admin
 * handler, the page's poll hands over the code, the host redeems it with its verifier and calls a
 * tool with the token.
 *
 * A host with a Client ID Metadata Document at a public URL opens the authorize page on the OAuth
 * handler in this process, where test/fixtures/hosts/stand-in.ts serves that URL behind the
 * server's own pinned fetch (the local stack cannot reach claude.ai, and nothing may leave the
 * machine); the request it stores is the stack's, as every other step is over HTTP.
 */
const root = () => baseUrl().slice(0, -API_BASE_PATH.length);
const resourceOf = (host: HostFixture) =>
  host.resource === 'none' ? undefined : host.resource === 'mcp' ? `${baseUrl()}/mcp` : baseUrl();

interface ServerMetadata {
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint?: string;
  token_endpoint_auth_methods_supported: string[];
  code_challenge_methods_supported: string[];
  client_id_metadata_document_supported?: boolean;
}

/**
 * What a host reads before it starts. The 401 of a call without a token names the
 * protected-resource document (RFC 9728 §5.1); a host that reads the one at the well-known path
 * under its server URL instead (§3.1) gets the MCP endpoint's. That document names the resource the
 * host sends and the authorization server, whose metadata (RFC 8414) names the endpoints and what
 * they accept.
 */
async function discover(host: HostFixture) {
  const challenged = await fetch(`${baseUrl()}/mcp`, {
    method: 'POST',
    headers: { Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'tools/list' }),
  });
  expect(challenged.status).toBe(401);
  const named = /resource_metadata="([^"]+)"/.exec(challenged.headers.get('www-authenticate') ?? '')?.[1];
  expect(named).toBeDefined();
  const documentUrl = host.resource === 'mcp' ? `${root()}${WELL_KNOWN_RESOURCE}${API_BASE_PATH}/mcp` : named!;
  const resource = (await (await fetch(documentUrl)).json()) as {
    resource: string;
    authorization_servers: string[];
    scopes_supported: string[];
  };
  const server = (await (
    await fetch(`${resource.authorization_servers[0]}${WELL_KNOWN_SERVER}`)
  ).json()) as ServerMetadata;
  return { resource, server };
}

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
async function openAuthorizePage(endpoint: string, query: Record<string, string>, inProcess: boolean) {
  const url = new URL(endpoint);
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
    const { resource: protectedResource, server } = await discover(host);
    // What the host looks for before it goes on: its way to identify itself, PKCE S256, the
    // scopes it asks for, and a token endpoint method it can use without a secret.
    if ('registration' in host.client) expect(server.registration_endpoint).toBe(`${root()}/oauth/register`);
    else expect(server.client_id_metadata_document_supported).toBe(true);
    expect(server.code_challenge_methods_supported).toContain('S256');
    if (host.scope) expect(protectedResource.scopes_supported).toEqual(expect.arrayContaining(host.scope.split(' ')));
    expect(host.tokenEndpointAuth?.(server.token_endpoint_auth_methods_supported) ?? 'none').toBe('none');

    let clientId: string;
    if ('registration' in host.client) {
      const res = await fetch(server.registration_endpoint!, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(host.client.registration),
      });
      const body = (await res.json()) as { client_id: string };
      expect(res.status, JSON.stringify(body)).toBe(201);
      // The host goes on with what the answer says: a public client, no secret to send.
      expect(body).toMatchObject({ token_endpoint_auth_method: 'none' });
      expect(body).not.toHaveProperty('client_secret');
      clientId = body.client_id;
    } else clientId = host.client.metadataDocument.client_id;

    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const resource = host.resource === 'none' ? undefined : protectedResource.resource;
    expect(resource).toBe(resourceOf(host));
    const opened = await openAuthorizePage(
      server.authorization_endpoint,
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
    const shown = await adminCommand<{ client_name: string; name_verified_by: string | null }>('oauth show', {
      code: approvalCode,
    });
    const name =
      'registration' in host.client ? host.client.registration.client_name : host.client.metadataDocument.client_name;
    expect(shown.client_name).toBe(name);
    // Vouched for by the host serving its metadata document; a registration's name by nobody.
    expect(shown.name_verified_by).toBe('registration' in host.client ? null : new URL(clientId).host);
    await adminCommand('oauth approve', { code: approvalCode, store: storeId, abilities: 'catalog:read' });

    const status = (await (await fetch(new URL(poll!, opened.url))).json()) as { status: string; redirect?: string };
    expect(status.status).toBe('done');
    const redirect = new URL(status.redirect!);
    // The browser goes back to the very redirect URI the host sent, with the code, its state and RFC 9207's iss.
    expect(status.redirect!.split('?')[0]).toBe(new URL(host.redirectUri).href);
    expect(redirect.searchParams.get('state')).toBe(state);
    expect(redirect.searchParams.get('iss')).toBe(root());

    const token = await fetch(server.token_endpoint, {
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
