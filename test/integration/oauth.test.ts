import { newContext } from '#shared/context.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import * as oauth from 'oauth4webapi';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { exchangeToken, type TokenOutcome } from '#app/oauth/token.ts';
import { rawDb } from '#db/core/client.ts';
import { hashToken } from '#domain/key/api-key.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { handler as oauthHandler } from '#functions/oauth/handler.ts';
import { adminCommand, baseUrl, createStore } from '#fixtures/api.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';
import { CURSOR_REDIRECT_URIS } from '#fixtures/hosts/cursor.ts';
import { useMcpClients } from '#fixtures/mcp-client.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * The OAuth 2.1 flow through real HTTP on the local stack (docs/oauth.md), with oauth4webapi as
 * the client: discovery, registration, the authorize page, the store admin's approval through
 * the admin handler, the token endpoint, and the API and MCP calls the token allows. Each refusal
 * the issue lists has its own case.
 */
const root = () => baseUrl().slice(0, -API_BASE_PATH.length);
const apiResource = () => baseUrl();
const mcpResource = () => `${baseUrl()}/mcp`;
const REDIRECT = 'http://127.0.0.1:9/callback';
const insecure = { [oauth.allowInsecureRequests]: true };

async function adminError(command: string, args: Record<string, unknown>) {
  const out = await admin({ command, args });
  if (out.ok) throw new Error(`${command} succeeded unexpectedly`);
  return out.error;
}

async function registration(redirectUris = [REDIRECT], name = 'Test chat app', authMethod = 'none') {
  const res = await fetch(`${root()}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: authMethod }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Record<string, unknown> & { client_id: string };
}

async function register(redirectUris = [REDIRECT], name = 'Test chat app'): Promise<string> {
  return (await registration(redirectUris, name)).client_id;
}

interface Started {
  status: number;
  location: string | null;
  page: string;
  approvalCode?: string;
  /** Where the page's script polls, resolved as a browser would against the page's URL. */
  statusUrl?: string;
}

async function authorize(params: Record<string, string | undefined>): Promise<Started> {
  const url = new URL(`${root()}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  const res = await fetch(url, { redirect: 'manual' });
  const page = await res.text();
  const code = /id="approval-code" data-request="[^"]+">([^<]+)</.exec(page)?.[1];
  const poll = /fetch\("([^"]+)"/.exec(page)?.[1];
  return {
    status: res.status,
    location: res.headers.get('location'),
    page,
    approvalCode: code,
    statusUrl: poll ? new URL(poll, url).href : undefined,
  };
}

async function poll(statusUrl: string): Promise<{ status: string; redirect?: string }> {
  const res = await fetch(statusUrl);
  return res.json() as Promise<{ status: string; redirect?: string }>;
}

/** A client's start of the flow: PKCE verifier and challenge, state, and the page's approval code. */
async function start(clientId: string, extra: Record<string, string | undefined> = {}) {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const started = await authorize({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    resource: mcpResource(),
    scope: 'catalog:read catalog:write orders:read',
    state,
    ...extra,
  });
  return { verifier, state, started };
}

async function discover() {
  const issuer = new URL(root());
  return oauth.processDiscoveryResponse(
    issuer,
    await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
  );
}

/**
 * The whole flow to tokens: start, approve as the store admin, follow the page, exchange the code.
 * `extra` overrides the authorize parameters (a `resource` of undefined sends none, at the token
 * endpoint too); `registered`, the client's redirect URIs.
 */
async function grantFor(
  storeId: string,
  approve: Record<string, unknown> = {},
  extra: Record<string, string | undefined> = {},
  registered = [REDIRECT],
) {
  const as = await discover();
  const clientId = await register(registered);
  const client: oauth.Client = { client_id: clientId, token_endpoint_auth_method: 'none' };
  const { verifier, state, started } = await start(clientId, extra);
  expect(started.status).toBe(200);
  const approved = await adminCommand<{ key_id: number }>('oauth approve', {
    code: started.approvalCode,
    store: storeId,
    ...approve,
  });
  const done = await poll(started.statusUrl!);
  expect(done.status).toBe('done');
  const params = oauth.validateAuthResponse(as, client, new URL(done.redirect!), state);
  const resource = 'resource' in extra ? extra.resource : mcpResource();
  const redirectUri = extra.redirect_uri ?? REDIRECT;
  const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, {
    additionalParameters: resource === undefined ? {} : { resource },
    ...insecure,
  });
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  return { as, client, clientId, tokens, keyId: approved.key_id, redirect: new URL(done.redirect!), verifier };
}

/** A raw request to the token endpoint: the body exactly as given. */
async function tokenRequest(params: Record<string, string>) {
  const res = await fetch(`${root()}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** The token endpoint in-process at another time: how a test sees what happens after a code or a window expires. */
const tokenRequestAt = (params: Record<string, string>, nowMs: number) =>
  exchangeToken(newContext(), params, root(), API_BASE_PATH, nowMs);

/** The token endpoint's handler in this worker, over its HTTP form: what the in-process races below get as an answer. */
async function tokenRequestInProcess(params: Record<string, string>) {
  const out = await oauthHandler(
    gatewayEvent(
      {
        resource: '/oauth/token',
        path: '/oauth/token',
        httpMethod: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'http' },
        body: new URLSearchParams(params).toString(),
      },
      { domainName: new URL(root()).host, path: '/oauth/token' },
    ),
    {} as never,
  );
  return { status: out.statusCode, headers: out.headers ?? {}, body: JSON.parse(out.body) as Record<string, string> };
}

/**
 * Parallel requests on this worker's DynamoDB client, where the in-process token endpoint
 * (tokenRequestAt, tokenRequestInProcess) sends its writes: a hook on the next issuing
 * transaction (TransactWriteItems) that names `marker` (the hash of a code or refresh token), so a
 * race that a loaded machine gives now and then happens every time. Removed after each test.
 */
const hooks: string[] = [];
afterEach(() => {
  for (const name of hooks.splice(0)) rawDb().middlewareStack.remove(name);
});
function onIssue(marker: string, hook: (input: { TransactItems: unknown[] }) => Promise<void>) {
  const name = `oauth-race-${randomUUID()}`;
  hooks.push(name);
  rawDb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = (args as { input: { TransactItems: unknown[] } }).input;
      if (context.commandName === 'TransactWriteItemsCommand' && JSON.stringify(input).includes(marker))
        await hook(input);
      return next(args);
    },
    { step: 'initialize', name, priority: 'high' },
  );
  return () => rawDb().middlewareStack.remove(name);
}

/**
 * Another request of the same client gets there first: it runs, whole, right before the next
 * issuing transaction naming `marker` is sent, which then meets what the winner committed.
 */
function loseTo(marker: string, winner: () => Promise<unknown>) {
  const remove = onIssue(marker, async () => {
    remove();
    await winner();
  });
}

/**
 * DynamoDB's answer when two transactions meet on one item at the same moment (a
 * TransactionConflict on the grant's key item, the others `None`): for the next `times` issuing
 * transactions naming `marker`. The only answer here that the store does not give itself; it gives
 * it only to truly simultaneous writes.
 */
function conflictNext(marker: string, times: number) {
  let left = times;
  onIssue(marker, async (input) => {
    if (left === 0) return;
    left--;
    throw new TransactionCanceledException({
      message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
      $metadata: {},
      CancellationReasons: input.TransactItems.map((_, i) => ({ Code: i === 1 ? 'TransactionConflict' : 'None' })),
    });
  });
  return { left: () => left };
}

/** Up to an approved authorization code, not exchanged. */
async function codeFor(
  storeId: string,
  extra: Record<string, string | undefined> = {},
  registered = [REDIRECT],
): Promise<{ clientId: string; code: string; verifier: string; keyId: number; redirect: URL }> {
  const clientId = await register(registered);
  const { verifier, started } = await start(clientId, extra);
  expect(started.status).toBe(200);
  const approved = await adminCommand<{ key_id: number }>('oauth approve', {
    code: started.approvalCode,
    store: storeId,
  });
  const done = await poll(started.statusUrl!);
  const redirect = new URL(done.redirect!);
  return { clientId, code: redirect.searchParams.get('code')!, verifier, keyId: approved.key_id, redirect };
}

const api = (token: string, path: string) =>
  fetch(`${baseUrl()}${path}`, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });

describe('OAuth: resource server', () => {
  it('answers a 401 with a challenge naming the protected-resource metadata', async () => {
    const res = await fetch(`${baseUrl()}/mcp`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(401);
    const metadata = `${root()}/.well-known/oauth-protected-resource${API_BASE_PATH}`;
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadata}"`);
    const bad = await api('sio_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/products');
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toContain(`resource_metadata="${metadata}"`);
    expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });

  it('publishes RFC 9728 metadata for the API and, path-suffixed, for the MCP endpoint', async () => {
    const base = await (await fetch(`${root()}/.well-known/oauth-protected-resource${API_BASE_PATH}`)).json();
    expect(base).toMatchObject({ resource: apiResource(), authorization_servers: [root()] });
    const mcp = (await (
      await fetch(`${root()}/.well-known/oauth-protected-resource${API_BASE_PATH}/mcp`)
    ).json()) as Record<string, unknown[]>;
    expect(mcp).toMatchObject({ resource: mcpResource(), authorization_servers: [root()] });
    expect(mcp.scopes_supported).toHaveLength(6);
  });

  it('publishes RFC 8414 metadata that oauth4webapi accepts (issuer, S256 only, iss in responses)', async () => {
    const as = await discover();
    expect(as.code_challenge_methods_supported).toEqual(['S256']);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });
});

describe('OAuth: the flow with the store admin', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });
  const mcpClient = useMcpClients('oauth-test');

  it('issues tokens that call the API and MCP with exactly the approved abilities', async () => {
    const { tokens, keyId, redirect, clientId } = await grantFor(
      storeId,
      { abilities: 'catalog:read', mcp: 'read-only', writes_per_hour: '100' },
      { resource: apiResource() },
    );
    expect(redirect.searchParams.get('iss')).toBe(root());
    expect(tokens.scope).toBe('catalog:read');
    expect(tokens.expires_in).toBe(3600);
    expect((await api(tokens.access_token, '/products')).status).toBe(200);
    const refused = await api(tokens.access_token, '/orders');
    expect(refused.status).toBe(403);
    const mcp = await mcpClient(tokens.access_token);
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    expect(names).toContain('list_products');
    expect(names).not.toContain('upsert_product');
    const keys = await adminCommand<{ data: { id: number; name: string; abilities: string[] }[] }>('keys list', {
      store: storeId,
    });
    // keys list shows the grant as what it is, with the MCP mode and budget it was approved with.
    expect(keys.data.find((k) => k.id === keyId)).toMatchObject({
      name: 'oauth: Test chat app',
      kind: 'grant',
      client_id: clientId,
      abilities: ['catalog:read'],
      mcp: 'read-only',
      writes_per_hour: 100,
    });
  });

  it('refuses approving wider than asked', async () => {
    const clientId = await register();
    const { started } = await start(clientId, { scope: 'catalog:read' });
    const error = await adminError('oauth approve', {
      code: started.approvalCode,
      store: storeId,
      abilities: 'catalog:write',
    });
    expect(error).toMatchObject({ code: 'validation_failed', field: 'abilities' });
  });

  it('refuses an approval code that was guessed', async () => {
    expect(await adminError('oauth approve', { code: 'ABCD-EFGH', store: storeId })).toMatchObject({
      code: 'not_found',
      field: 'code',
    });
    expect(await adminError('oauth deny', { code: 'ABCD-EFGH' })).toMatchObject({ code: 'not_found', field: 'code' });
  });

  it('refuses an approval code that is replayed, to approve or to deny', async () => {
    const clientId = await register();
    const { started } = await start(clientId);
    await adminCommand('oauth approve', { code: started.approvalCode, store: storeId });
    expect(await adminError('oauth approve', { code: started.approvalCode, store: storeId })).toMatchObject({
      code: 'invalid_transition',
    });
    expect(await adminError('oauth deny', { code: started.approvalCode })).toMatchObject({
      code: 'invalid_transition',
    });
  });

  it('sends a denied request back with access_denied, state and iss', async () => {
    const clientId = await register();
    const { started, state } = await start(clientId);
    expect((await poll(started.statusUrl!)).status).toBe('pending');
    await adminCommand('oauth deny', { code: started.approvalCode });
    const redirect = new URL((await poll(started.statusUrl!)).redirect!);
    expect(redirect.searchParams.get('error')).toBe('access_denied');
    expect(redirect.searchParams.get('state')).toBe(state);
    expect(redirect.searchParams.get('iss')).toBe(root());
  });

  it('refuses a redirect URI that differs by one character, on the page and without redirecting', async () => {
    const clientId = await register();
    const { started } = await start(clientId, { redirect_uri: `${REDIRECT}x` });
    expect(started.status).toBe(400);
    expect(started.location).toBeNull();
    expect(started.approvalCode).toBeUndefined();
  });

  it.each([
    ['a missing PKCE challenge', { code_challenge: undefined, code_challenge_method: undefined }],
    ['a plain PKCE challenge', { code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }],
  ])('refuses %s, back at the redirect URI, with no approval code', async (_name, extra) => {
    const clientId = await register();
    const { started } = await start(clientId, extra);
    expect(started.status).toBe(302);
    const back = new URL(started.location!);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(started.approvalCode).toBeUndefined();
  });

  it('revokes the tokens issued from a code when the code comes back, whoever presents it', async () => {
    const { as, client, clientId, tokens, keyId, redirect, verifier } = await grantFor(
      storeId,
      { abilities: 'catalog:read' },
      { resource: apiResource() },
    );
    expect((await api(tokens.access_token, '/products')).status).toBe(200);
    const replay = await fetch(as.token_endpoint!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: redirect.searchParams.get('code')!,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: clientId,
      }),
    });
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ error: 'invalid_grant' });
    // The access and the refresh token the first exchange issued end with the grant.
    const after = await api(tokens.access_token, '/products');
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const refresh = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    expect(refresh.status).toBe(400);
    const keys = await adminCommand<{ data: { id: number; status: string }[] }>('keys list', { store: storeId });
    expect(keys.data.find((k) => k.id === keyId)?.status).toBe('revoked');
  });

  it('lists the requests waiting for a decision newest first, without codes; a decided one leaves the list', async () => {
    const clientId = await register(undefined, 'Listed chat app');
    const older = await start(clientId, { scope: 'catalog:read' });
    const newer = await start(clientId, { scope: 'orders:read content:read' });
    const listed = async () =>
      (
        await adminCommand<{
          data: { client_id: string; abilities: string[] }[];
        }>('oauth requests')
      ).data.filter((r) => r.client_id === clientId);
    expect((await listed()).map((r) => r.abilities)).toEqual([['orders:read', 'content:read'], ['catalog:read']]);
    expect((await listed())[0]).toEqual({
      client_id: clientId,
      client_name: 'Listed chat app',
      name_verified: false,
      name_verified_by: null,
      redirect_host: '127.0.0.1:9',
      abilities: ['orders:read', 'content:read'],
      ip: expect.any(String),
      user_agent: expect.any(String),
      created_at: expect.any(String),
      age_seconds: expect.any(Number),
      expires_at: expect.any(String),
    });
    // Never what only the page and the client hold: the approval code, the PKCE challenge, the page's secret, the state.
    const all = JSON.stringify(await listed());
    for (const held of [newer.state, newer.started.approvalCode!, older.started.approvalCode!])
      expect(all).not.toContain(held);
    await adminCommand('oauth deny', { code: newer.started.approvalCode });
    await adminCommand('oauth approve', { code: older.started.approvalCode, store: storeId });
    expect(await listed()).toEqual([]);
    expect(await adminError('oauth requests', { store: storeId })).toMatchObject({ code: 'validation_failed' });
  });

  it('refuses a token for another resource: an MCP-bound token on the HTTP API', async () => {
    const { tokens } = await grantFor(storeId, { abilities: 'catalog:read' });
    const res = await api(tokens.access_token, '/products');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
    const mcp = await mcpClient(tokens.access_token);
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('rotates refresh tokens; a rotated one answers its new pair for 30 s, then revokes the whole grant', async () => {
    const { as, client, clientId, tokens } = await grantFor(storeId, {}, { resource: apiResource() });
    const first = tokens.refresh_token!;
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), first, insecure),
    );
    expect(refreshed.refresh_token).not.toBe(first);
    expect((await api(tokens.access_token, '/products')).status).toBe(401);
    expect((await api(refreshed.access_token, '/products')).status).toBe(200);
    // Within the window (a parallel refresh that lost the race): the same pair, the grant kept.
    const late = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first, client_id: clientId });
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({
      access_token: refreshed.access_token,
      refresh_token: refreshed.refresh_token,
      scope: refreshed.scope,
    });
    expect((await api(refreshed.access_token, '/products')).status).toBe(200);
    // After the window: a reuse. The grant ends, with the pair the rotation issued.
    const replay = await tokenRequestAt(
      { grant_type: 'refresh_token', refresh_token: first, client_id: clientId },
      Date.now() + 31_000,
    );
    expect(replay).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect((await api(refreshed.access_token, '/products')).status).toBe(401);
    const again = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, insecure);
    expect(again.status).toBe(400);
  });

  it('refreshes a grant for the API with the MCP endpoint as resource, and later with the API again', async () => {
    const { clientId, tokens } = await grantFor(storeId, {}, { resource: apiResource() });
    const forMcp = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
      client_id: clientId,
      resource: mcpResource(),
    });
    expect(forMcp.status).toBe(200);
    const mcp = await mcpClient(forMcp.body.access_token!);
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
    // The access token is narrowed to what the refresh named; the grant keeps its resource.
    expect((await api(forMcp.body.access_token!, '/products')).status).toBe(401);
    const forApi = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: forMcp.body.refresh_token!,
      client_id: clientId,
      resource: `${apiResource()}/`,
    });
    expect(forApi.status).toBe(200);
    expect((await api(forApi.body.access_token!, '/products')).status).toBe(200);
  });

  it('ends access and refresh tokens at once when the grant is revoked with keys revoke', async () => {
    const { as, client, tokens, keyId } = await grantFor(storeId, {}, { resource: apiResource() });
    expect((await api(tokens.access_token, '/products')).status).toBe(200);
    await adminCommand('keys revoke', { id: keyId });
    expect((await api(tokens.access_token, '/products')).status).toBe(401);
    const res = await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, insecure);
    expect(res.status).toBe(400);
  });
});

describe('OAuth: what the hosts send', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });
  // Cursor's whole flow is test/integration/oauth-hosts.test.ts's; here, what it must be refused.
  const CURSOR = CURSOR_REDIRECT_URIS;

  it('shows an app scheme on the page and sends errors to it with a 302', async () => {
    const clientId = await register(CURSOR, 'Cursor');
    const waiting = await start(clientId, { redirect_uri: CURSOR[0] });
    expect(waiting.started.status).toBe(200);
    expect(waiting.started.page).toContain('cursor://anysphere.cursor-mcp');
    await adminCommand('oauth deny', { code: waiting.started.approvalCode });
    const refused = await start(clientId, { redirect_uri: CURSOR[0], code_challenge: undefined });
    expect(refused.started.status).toBe(302);
    expect(refused.started.location).toMatch(
      /^cursor:\/\/anysphere\.cursor-mcp\/oauth\/callback\?error=invalid_request&/,
    );
  });

  it.each([
    'javascript:alert(1)//',
    'data:text/html,hi',
    'file:///tmp/cb',
    'vbscript:x',
    'about:blank',
    'blob:https://example.com/x',
    'http://example.com/callback',
    'cursor://anysphere.cursor-mcp/oauth/callback#f',
  ])('refuses to register the redirect URI %s', async (uri) => {
    const res = await fetch(`${root()}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'x', redirect_uris: [CURSOR[1], uri] }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });

  it('accepts a loopback redirect URI on another port than registered; path and query stay exact', async () => {
    const registered = ['http://127.0.0.1:33418/callback'];
    const { tokens, redirect } = await grantFor(
      storeId,
      {},
      { redirect_uri: 'http://127.0.0.1:40123/callback', resource: apiResource() },
      registered,
    );
    expect(redirect.port).toBe('40123');
    expect((await api(tokens.access_token, '/products')).status).toBe(200);
    const clientId = await register(registered);
    for (const other of ['http://127.0.0.1:40123/callback2', 'http://127.0.0.1:40123/callback?x=1']) {
      const { started } = await start(clientId, { redirect_uri: other });
      expect(started.status, other).toBe(400);
      expect(started.location).toBeNull();
    }
  });

  it('registers a client asking for client_secret_post or client_secret_basic as public, and it gets tokens', async () => {
    for (const method of ['client_secret_post', 'client_secret_basic']) {
      const answer = await registration([REDIRECT], `Confidential ${method}`, method);
      // RFC 7591 §3.2.1: the server replaced the requested method, and the answer says so; no secret.
      expect(answer.token_endpoint_auth_method).toBe('none');
      expect(answer).not.toHaveProperty('client_secret');
      const { verifier, started } = await start(answer.client_id, { resource: apiResource() });
      expect(started.status).toBe(200);
      await adminCommand('oauth approve', { code: started.approvalCode, store: storeId, abilities: 'catalog:read' });
      const code = new URL((await poll(started.statusUrl!)).redirect!).searchParams.get('code')!;
      const tokens = await tokenRequest({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: answer.client_id,
        resource: apiResource(),
      });
      expect(tokens.status, method).toBe(200);
      expect((await api(tokens.body.access_token!, '/products')).status, method).toBe(200);
    }
  });

  it('still refuses a token endpoint authentication method it does not know', async () => {
    const res = await fetch(`${root()}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'tls_client_auth_v9' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });

  it('accepts offline_access in scope and ignores it: the grant has the abilities and a refresh token', async () => {
    const { tokens } = await grantFor(storeId, {}, { scope: 'offline_access catalog:read', resource: apiResource() });
    expect(tokens.scope).toBe('catalog:read');
    expect(tokens.refresh_token).toMatch(/^sir_/);
  });

  it('takes a request without resource as one for the HTTP API', async () => {
    const { tokens } = await grantFor(storeId, {}, { resource: undefined });
    expect((await api(tokens.access_token, '/products')).status).toBe(200);
  });

  it('takes a trailing slash as the same resource', async () => {
    const { tokens } = await grantFor(storeId, {}, { resource: `${apiResource()}/` });
    expect((await api(tokens.access_token, '/products')).status).toBe(200);
    const mcp = await grantFor(storeId, {}, { resource: `${mcpResource()}/` });
    expect((await api(mcp.tokens.access_token, '/products')).status).toBe(401);
  });
});

/**
 * Each refusal's logic (a code for another redirect URI, resource or client, expired, without a
 * parameter, its grant revoked; a refresh outside the grant, rotated twice, by another client,
 * expired, after a revocation; parallel refreshes) is the token use case's, tested in-process in
 * test/usecase/oauth.test.ts; here, one request for each kind of answer and the forced races.
 */
describe('OAuth: every refusal of the token endpoint', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });
  const exchange = (c: { code: string; verifier: string; clientId: string }, over: Record<string, string> = {}) =>
    tokenRequest({
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: REDIRECT,
      client_id: c.clientId,
      ...over,
    });
  const invalidGrant = { status: 400, body: { error: 'invalid_grant' } };

  it('refuses a wrong PKCE verifier, and the right one still exchanges the code', async () => {
    const c = await codeFor(storeId);
    expect(await exchange(c, { code_verifier: oauth.generateRandomCodeVerifier() })).toMatchObject(invalidGrant);
    expect(await exchange(c, { code_verifier: 'short' })).toMatchObject(invalidGrant);
    expect((await exchange(c)).status).toBe(200);
  });

  it('refuses an unknown or missing grant_type', async () => {
    for (const grantType of ['password', 'client_credentials', ''])
      expect(await tokenRequest({ grant_type: grantType, client_id: 'oc_x' })).toMatchObject({
        status: 400,
        body: { error: 'unsupported_grant_type' },
      });
    expect(await tokenRequest({})).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
  });

  it('refuses a code exchange without code_verifier with 400 invalid_request, and spends nothing', async () => {
    const c = await codeFor(storeId);
    const params: Record<string, string> = {
      grant_type: 'authorization_code',
      code: c.code,
      redirect_uri: REDIRECT,
      client_id: c.clientId,
    };
    expect(await tokenRequest(params)).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
    expect((await exchange(c)).status).toBe(200);
  });

  it('refuses a code and a refresh token it never issued', async () => {
    const client = await register();
    expect(
      await tokenRequest({
        grant_type: 'authorization_code',
        code: `sic_${'A'.repeat(43)}`,
        code_verifier: oauth.generateRandomCodeVerifier(),
        redirect_uri: REDIRECT,
        client_id: client,
      }),
    ).toMatchObject(invalidGrant);
    expect(
      await tokenRequest({ grant_type: 'refresh_token', refresh_token: `sir_${'A'.repeat(43)}`, client_id: client }),
    ).toMatchObject(invalidGrant);
  });

  it("refuses the second of two parallel exchanges of one code, and keeps the first one's tokens", async () => {
    const c = await codeFor(storeId, { resource: apiResource() });
    const params = {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: REDIRECT,
      client_id: c.clientId,
    };
    let first: TokenOutcome | undefined;
    loseTo(hashToken(c.code), async () => {
      first = await tokenRequestAt(params, Date.now());
    });
    const second = await tokenRequestAt(params, Date.now());
    expect(second).toEqual({ ok: false, error: 'invalid_grant', description: 'the code was already used' });
    // The same client sent it twice, which is no leak: nothing is revoked.
    expect(first).toMatchObject({ ok: true });
    const { body } = first as Extract<TokenOutcome, { ok: true }>;
    expect((await api(body.access_token as string, '/products')).status).toBe(200);
  });

  it('tries an exchange and a refresh again when a parallel transaction cancels theirs, never answering revoked', async () => {
    const c = await codeFor(storeId, { resource: apiResource() });
    const onCode = conflictNext(hashToken(c.code), 2);
    const exchanged = await tokenRequestInProcess({
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: REDIRECT,
      client_id: c.clientId,
    });
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    expect(onCode.left()).toBe(0);
    const onRefresh = conflictNext(hashToken(exchanged.body.refresh_token!), 2);
    const refreshed = await tokenRequestInProcess({
      grant_type: 'refresh_token',
      refresh_token: exchanged.body.refresh_token!,
      client_id: c.clientId,
    });
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(onRefresh.left()).toBe(0);
    expect((await api(refreshed.body.access_token!, '/products')).status).toBe(200);
  });

  it('answers 429 temporarily_unavailable with Retry-After when every round conflicts, and spends nothing', async () => {
    const c = await codeFor(storeId, { resource: apiResource() });
    const code = {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: REDIRECT,
      client_id: c.clientId,
    };
    const onCode = conflictNext(hashToken(c.code), 5);
    const busyCode = await tokenRequestInProcess(code);
    expect(busyCode).toMatchObject({
      status: 429,
      headers: { 'Retry-After': '1' },
      body: { error: 'temporarily_unavailable' },
    });
    expect(onCode.left()).toBe(0);
    const tokens = await tokenRequestInProcess(code);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    const refresh = { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token!, client_id: c.clientId };
    const onRefresh = conflictNext(hashToken(refresh.refresh_token), 5);
    expect(await tokenRequestInProcess(refresh)).toMatchObject({
      status: 429,
      headers: { 'Retry-After': '1' },
      body: { error: 'temporarily_unavailable' },
    });
    expect(onRefresh.left()).toBe(0);
    // Nothing was spent: the access token still works, the refresh token still refreshes.
    expect((await api(tokens.body.access_token!, '/products')).status).toBe(200);
    expect((await tokenRequestInProcess(refresh)).status).toBe(200);
  });
});

describe('OAuth: Client ID Metadata Documents', () => {
  let server: Server;
  let documentUrl: string;
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
    server = createServer((req, res) => {
      res.setHeader('Content-Type', 'application/json');
      const own = `http://127.0.0.1:${(server.address() as AddressInfo).port}${req.url}`;
      // The shape of ChatGPT's document: it prefers private_key_jwt, with a key set (developers.openai.com/apps-sdk/build/auth).
      const signed =
        req.url === '/signed-client.json'
          ? { token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://example.com/jwks.json' }
          : {};
      res.end(JSON.stringify({ client_id: own, client_name: 'Metadata client', redirect_uris: [REDIRECT], ...signed }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    documentUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/client.json`;
  });

  it('takes a document naming private_key_jwt as a public client: PKCE alone gets the tokens', async () => {
    const signedUrl = documentUrl.replace('/client.json', '/signed-client.json');
    const { verifier, started } = await start(signedUrl, { resource: apiResource() });
    expect(started.status).toBe(200);
    await adminCommand('oauth approve', { code: started.approvalCode, store: storeId, abilities: 'catalog:read' });
    const code = new URL((await poll(started.statusUrl!)).redirect!).searchParams.get('code')!;
    const tokens = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: signedUrl,
      resource: apiResource(),
    });
    expect(tokens.status).toBe(200);
    expect((await api(tokens.body.access_token!, '/products')).status).toBe(200);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('shows the name from the document a URL client_id points at', async () => {
    const { started } = await start(documentUrl);
    expect(started.status).toBe(200);
    expect(started.page).toContain('Metadata client');
    expect(started.page).toContain('127.0.0.1:9');
    await adminCommand('oauth deny', { code: started.approvalCode });
    expect(storeId).toBeTruthy();
  });

  it('refuses a client metadata document on a private address', async () => {
    for (const clientId of [
      'https://192.168.1.20/client.json',
      'https://10.0.0.5/client.json',
      'https://169.254.169.254/latest',
    ]) {
      const { started } = await start(clientId);
      expect(started.status).toBe(400);
      expect(started.approvalCode).toBeUndefined();
      expect(started.location).toBeNull();
    }
  });
});
