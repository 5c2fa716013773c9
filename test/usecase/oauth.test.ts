import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  API_RESOURCE,
  approveAuthorization,
  authenticateToken,
  denyAuthorization,
  exchangeToken,
  existingKey,
  keysOfStore,
  listAuthorizationRequests,
  MCP_RESOURCE,
  metadataDocuments,
  newStore,
  OAUTH_BASE_PATH,
  OAUTH_ISSUER,
  oauthCaller,
  outcome,
  pkcePair,
  pollAuthorization,
  revokeKeyNow,
  registerClient,
  showAuthorization,
  startAuthorization,
  unique,
} from '#fixtures/usecase.ts';
import { limitWindow } from '#domain/oauth/bounds.ts';
import { REQUEST_SECONDS } from '#domain/oauth/oauth.ts';

/**
 * The OAuth use cases (shared/app/oauth/) called in-process: registration, the authorization
 * request and its page's poll, the store admin's decisions, and the token endpoint, with their
 * bounds and every time passed in. What the handler answers for each outcome (the page, the 302,
 * RFC 6749 bodies and statuses) is test/integration/oauth*.test.ts's.
 */
const REDIRECT = 'http://127.0.0.1:9/callback';
const noDocuments = metadataDocuments({});
const SCOPE = 'catalog:read catalog:write orders:read';

async function registered(redirectUris = [REDIRECT], name = 'Chat app') {
  const out = await registerClient({ client_name: name, redirect_uris: redirectUris }, Date.now(), oauthCaller());
  if (out.kind !== 'registered') throw new Error(JSON.stringify(out));
  return out.client;
}

function authorizeQuery(clientId: string, challenge: string, over: Record<string, string | undefined> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: MCP_RESOURCE,
    scope: SCOPE,
    state: 'client-state',
    ...over,
  };
}

/** An authorization request, as the authorize page starts it. */
function authorize(
  clientId: string,
  over: Record<string, string | undefined> = {},
  options: { nowMs?: number; caller?: ReturnType<typeof oauthCaller>; documents?: typeof noDocuments } = {},
) {
  const pkce = pkcePair();
  return {
    pkce,
    started: startAuthorization(
      authorizeQuery(clientId, pkce.challenge, over),
      OAUTH_ISSUER,
      OAUTH_BASE_PATH,
      options.nowMs ?? Date.now(),
      options.documents ?? noDocuments,
      options.caller ?? oauthCaller(),
    ),
  };
}

/** A request waiting for the store admin. */
async function waiting(clientId: string, over: Record<string, string | undefined> = {}) {
  const { pkce, started } = authorize(clientId, over);
  const out = await started;
  if (out.kind !== 'waiting') throw new Error(JSON.stringify(out));
  return { ...out, pkce };
}

const approve = (code: string, storeId: string, abilities?: ('catalog:read' | 'catalog:write' | 'orders:read')[]) =>
  approveAuthorization({ code, storeId, abilities, mcp: 'full', writesPerHour: null }, Date.now());

/** The page's redirect once the admin decided, read as the client reads it. */
async function polled(handle: string, nowMs = Date.now()) {
  const out = await pollAuthorization(handle, OAUTH_ISSUER, nowMs);
  if (out.status !== 'done') throw new Error(JSON.stringify(out));
  return new URL(out.redirect);
}

/** Up to an approved authorization code, not exchanged. */
async function approvedCode(storeId: string, over: Record<string, string | undefined> = {}, redirectUris = [REDIRECT]) {
  const client = await registered(redirectUris);
  const request = await waiting(client.client_id, over);
  const { key_id: keyId } = await approve(request.request.approval_code, storeId);
  const code = (await polled(request.handle)).searchParams.get('code') as string;
  return { clientId: client.client_id, code, verifier: request.pkce.verifier, keyId };
}

type Code = Awaited<ReturnType<typeof approvedCode>>;
const exchange = (c: Code, over: Record<string, string | undefined> = {}, nowMs = Date.now()) =>
  exchangeToken(
    {
      grant_type: 'authorization_code',
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: REDIRECT,
      client_id: c.clientId,
      resource: MCP_RESOURCE,
      ...over,
    },
    OAUTH_ISSUER,
    OAUTH_BASE_PATH,
    nowMs,
  );
const refresh = (clientId: string, refreshToken: string, nowMs = Date.now(), over: Record<string, string> = {}) =>
  exchangeToken(
    { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId, ...over },
    OAUTH_ISSUER,
    OAUTH_BASE_PATH,
    nowMs,
  );

/** The tokens of a grant, exchanged from a fresh code. */
async function tokensFor(storeId: string, resource = MCP_RESOURCE) {
  const c = await approvedCode(storeId, { resource });
  const out = await exchange(c, { resource });
  if (!out.ok) throw new Error(JSON.stringify(out));
  return { ...c, access: out.body.access_token as string, refresh: out.body.refresh_token as string, body: out.body };
}

/** Whether an access token gets through the authorizer on the MCP endpoint. */
const serves = async (accessToken: string) =>
  (await authenticateToken(accessToken, undefined, `${OAUTH_BASE_PATH}/mcp`)).ok;

describe('registerClient', () => {
  it('registers a public client, refuses metadata it cannot take, and counts every attempt against the address', async () => {
    const caller = oauthCaller({ registrationsPerIp: 3 });
    const now = Date.now();
    const first = await registerClient({ client_name: 'Chat app', redirect_uris: [REDIRECT] }, now, caller);
    expect(first).toMatchObject({
      kind: 'registered',
      client: {
        client_id: expect.stringMatching(/^oc_[0-9a-f]{32}$/),
        client_name: 'Chat app',
        redirect_uris: [REDIRECT],
      },
    });
    expect(await registerClient({ redirect_uris: ['javascript:alert(1)'] }, now, caller)).toMatchObject({
      kind: 'invalid',
      reason: expect.stringContaining('redirect URI'),
    });
    expect(await registerClient({ client_name: 'Other', redirect_uris: [REDIRECT] }, now, caller)).toMatchObject({
      kind: 'registered',
    });
    // The fourth attempt of the window from this address, valid or not, stores nothing.
    expect(await registerClient({ client_name: 'Flood', redirect_uris: [REDIRECT] }, now, caller)).toMatchObject({
      kind: 'limited',
      retryAfterSeconds: expect.any(Number),
    });
    // Another address has its own count.
    expect(
      await registerClient(
        { client_name: 'Elsewhere', redirect_uris: [REDIRECT] },
        now,
        oauthCaller({ registrationsPerIp: 3 }),
      ),
    ).toMatchObject({ kind: 'registered' });
  });
});

describe('startAuthorization and pollAuthorization', () => {
  it('stores a request for the admin, who is shown its caller and client, never its secrets', async () => {
    const client = await registered([REDIRECT], 'Claude');
    const caller = oauthCaller();
    const { started } = authorize(client.client_id, {}, { caller });
    const out = await started;
    expect(out).toMatchObject({
      kind: 'waiting',
      redirectHost: '127.0.0.1:9',
      request: {
        client_id: client.client_id,
        client_name: 'Claude',
        abilities: ['catalog:read', 'catalog:write', 'orders:read'],
        resource: MCP_RESOURCE,
        status: 'pending',
        key_id: null,
        caller_ip: caller.ip,
      },
    });
    if (out.kind !== 'waiting') return;
    expect(out.handle.startsWith(`${out.request.approval_code}.`)).toBe(true);
    const shown = await showAuthorization(out.request.approval_code, Date.now());
    expect(shown).toMatchObject({ client_name: 'Claude', name_verified: false, ip: caller.ip, status: 'pending' });
    expect(JSON.stringify(shown)).not.toContain(out.request.code_challenge);
    const listed = await listAuthorizationRequests(Date.now(), { limit: 50, cursor: null });
    expect(listed.data.filter((r) => r.ip === caller.ip)).toHaveLength(1);
    expect(JSON.stringify(listed)).not.toContain(out.request.approval_code);
    expect(await pollAuthorization(out.handle, OAUTH_ISSUER, Date.now())).toEqual({ status: 'pending' });
    // Only the page holding the request's secret learns anything.
    expect(
      await pollAuthorization(`${out.request.approval_code}.sis_${'A'.repeat(43)}`, OAUTH_ISSUER, Date.now()),
    ).toEqual({
      status: 'unknown',
    });
  });

  it('refuses on the page, redirecting nowhere, a missing or unknown client and a redirect URI it did not register', async () => {
    const client = await registered();
    const refusedOn = async (over: Record<string, string | undefined>) =>
      await authorize(client.client_id, over).started;
    expect(await refusedOn({ client_id: undefined })).toMatchObject({ kind: 'refused' });
    expect(await refusedOn({ client_id: `oc_${'0'.repeat(32)}` })).toMatchObject({ kind: 'refused' });
    expect(await refusedOn({ redirect_uri: 'http://127.0.0.1:9/callbacks' })).toMatchObject({ kind: 'refused' });
    expect(await refusedOn({ redirect_uri: 'http://localhost:9/callback' })).toMatchObject({ kind: 'refused' });
    // A loopback redirect URI may come back on another port (RFC 8252 §7.3); path and query stay exact.
    expect(await refusedOn({ redirect_uri: 'http://127.0.0.1:40123/callback' })).toMatchObject({ kind: 'waiting' });
  });

  it('sends every other refusal to the verified redirect URI with error, state and iss', async () => {
    const client = await registered();
    const cases: [Record<string, string | undefined>, string][] = [
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'short' }, 'invalid_request'],
      [{ resource: 'https://evil.example.com/api/v1/integrations' }, 'invalid_target'],
      [{ scope: 'catalog:read admin' }, 'invalid_scope'],
    ];
    for (const [over, error] of cases) {
      const out = await authorize(client.client_id, over).started;
      expect(out, error).toMatchObject({ kind: 'redirect' });
      if (out.kind !== 'redirect') continue;
      const url = new URL(out.url);
      expect(`${url.origin}${url.pathname}`).toBe(REDIRECT);
      expect(Object.fromEntries(url.searchParams)).toMatchObject({ error, state: 'client-state', iss: OAUTH_ISSUER });
    }
  });

  it("takes a request without resource as the HTTP API's, and a metadata document's name as verified by its host", async () => {
    const documentId = 'https://agents.example.com/oauth/client.json';
    const documents = metadataDocuments({ [documentId]: { client_name: 'Agent', redirect_uris: [REDIRECT] } });
    const out = await authorize(documentId, { resource: undefined }, { documents }).started;
    expect(out).toMatchObject({ kind: 'waiting', request: { resource: API_RESOURCE, client_name: 'Agent' } });
    if (out.kind !== 'waiting') return;
    expect(await showAuthorization(out.request.approval_code, Date.now())).toMatchObject({
      name_verified: true,
      name_verified_by: 'agents.example.com',
    });
  });

  it('bounds the requests of one address, and those waiting from everyone, within a window', async () => {
    // A metadata document's client: a registration would have expired by the window below.
    const documentId = 'https://bounds.example.com/client.json';
    const documents = metadataDocuments({ [documentId]: { client_name: 'Bounded', redirect_uris: [REDIRECT] } });
    const client = { client_id: documentId };
    // A 10-minute window of its own, years ahead: no other test's requests count in it.
    const windowStart = limitWindow(Date.now()).endMs + randomInt(1000, 100_000) * 600_000;
    const at = (caller: ReturnType<typeof oauthCaller>) => ({ nowMs: windowStart + 1000, caller, documents });
    const one = oauthCaller({ authorizationsPerIp: 2 });
    expect(await authorize(client.client_id, {}, at(one)).started).toMatchObject({ kind: 'waiting' });
    expect(await authorize(client.client_id, { scope: 'nonsense' }, at(one)).started).toMatchObject({
      kind: 'redirect',
    });
    expect(await authorize(client.client_id, {}, at(one)).started).toMatchObject({ kind: 'limited' });
    // Everyone's waiting requests: one is already stored in this window, a second fits, a third does not.
    const crowd = (ip: number) => ({ ...oauthCaller({ pendingRequests: 2 }), ip: `192.0.2.${ip}` });
    expect(await authorize(client.client_id, {}, at(crowd(1))).started).toMatchObject({ kind: 'waiting' });
    expect(await authorize(client.client_id, {}, at(crowd(2))).started).toMatchObject({ kind: 'limited' });
  });
});

describe('the store admin decides', () => {
  it('approves never wider than asked, writes the key only when the page picks the approval up, and decides once', async () => {
    const storeId = await newStore();
    const client = await registered();
    const request = await waiting(client.client_id, { scope: 'catalog:read orders:read' });
    const code = request.request.approval_code;
    expect(await outcome(approve(code, storeId, ['catalog:read', 'catalog:write']))).toMatchObject({
      kind: 'refused',
      code: 'validation_failed',
      field: 'abilities',
    });
    expect(await outcome(approve(code, unique('nostore')))).toMatchObject({ code: 'not_found', field: 'store' });
    expect(await outcome(approve('ZZZZ-ZZZZ', storeId))).toMatchObject({ code: 'not_found', field: 'code' });
    const approved = await approve(code, storeId, ['catalog:read']);
    expect(approved).toMatchObject({ approval_code: code, abilities: ['catalog:read'] });
    // An approval the page never picked up leaves no key.
    expect(await keysOfStore(storeId)).toEqual([]);
    expect(await outcome(approve(code, storeId))).toMatchObject({ code: 'invalid_transition', field: 'code' });
    expect(await outcome(denyAuthorization(code, Date.now()))).toMatchObject({ code: 'invalid_transition' });
    const back = await polled(request.handle);
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      code: expect.stringMatching(/^sic_/),
      state: 'client-state',
      iss: OAUTH_ISSUER,
    });
    expect(await keysOfStore(storeId)).toEqual([
      expect.objectContaining({ id: approved.key_id, name: 'oauth: Chat app', abilities: ['catalog:read'] }),
    ]);
    // The code is handed out once.
    expect(await pollAuthorization(request.handle, OAUTH_ISSUER, Date.now())).toEqual({ status: 'unknown' });
  });

  it('sends a denied request back with access_denied, and ends an undecided or unredeemed one at its expiry', async () => {
    const storeId = await newStore();
    const client = await registered();
    const denied = await waiting(client.client_id);
    expect(await denyAuthorization(denied.request.approval_code, Date.now())).toMatchObject({ status: 'denied' });
    expect(Object.fromEntries((await polled(denied.handle)).searchParams)).toMatchObject({
      error: 'access_denied',
      state: 'client-state',
    });
    // Past each request's expiry (REQUEST_SECONDS after it was made), whether or not the TTL sweep removed it.
    const undecided = await waiting(client.client_id);
    const lateFor = (r: typeof undecided) => r.request.expires_at + 1;
    expect(lateFor(undecided)).toBe(undecided.request.created_at + REQUEST_SECONDS * 1000 + 1);
    expect(
      await outcome(
        approveAuthorization(
          { code: undecided.request.approval_code, storeId, abilities: undefined, mcp: 'full', writesPerHour: null },
          lateFor(undecided),
        ),
      ),
    ).toMatchObject({ code: 'invalid_transition' });
    expect((await polled(undecided.handle, lateFor(undecided))).searchParams.get('error_description')).toBe('expired');
    const unredeemed = await waiting(client.client_id);
    await approve(unredeemed.request.approval_code, storeId);
    expect((await polled(unredeemed.handle, lateFor(unredeemed))).searchParams.get('error')).toBe('access_denied');
    expect(await keysOfStore(storeId)).toEqual([]);
  });
});

describe('the store admin decides too late', () => {
  it('refuses approving or denying a request past its expiry, saying it expired, and shows it expired', async () => {
    const storeId = await newStore();
    const client = await registered();
    const request = await waiting(client.client_id);
    const code = request.request.approval_code;
    const late = Date.now() + REQUEST_SECONDS * 1000 + 1000;
    const expired = {
      kind: 'refused',
      code: 'invalid_transition',
      message: `the request ${code} is expired`,
      field: 'code',
    };
    expect(
      await outcome(
        approveAuthorization({ code, storeId, abilities: undefined, mcp: 'full', writesPerHour: null }, late),
      ),
    ).toEqual(expired);
    expect(await outcome(denyAuthorization(code, late))).toEqual(expired);
    expect(await showAuthorization(code, late)).toMatchObject({ approval_code: code, status: 'expired' });
    expect(await showAuthorization(code, Date.now())).toMatchObject({ status: 'pending' });
  });
});

describe('exchangeToken', () => {
  it('exchanges a code for tokens the authorizer takes on the granted resource only, with the approved abilities', async () => {
    const storeId = await newStore();
    const t = await tokensFor(storeId);
    expect(t.body).toMatchObject({
      token_type: 'Bearer',
      access_token: expect.stringMatching(/^sio_/),
      refresh_token: expect.stringMatching(/^sir_/),
      scope: 'catalog:read catalog:write orders:read',
      expires_in: 3600,
    });
    expect(await authenticateToken(t.access, undefined, `${OAUTH_BASE_PATH}/mcp`)).toMatchObject({
      ok: true,
      principal: { keyId: t.keyId, storeId, abilities: ['catalog:read', 'catalog:write', 'orders:read'] },
    });
    // Granted for the MCP endpoint: the rest of the API refuses it.
    expect(await authenticateToken(t.access, undefined, `${OAUTH_BASE_PATH}/products`)).toEqual({ ok: false });
  });

  it('refuses a code for another verifier, redirect URI, resource or client, or past its minute; the right request still exchanges it', async () => {
    const storeId = await newStore();
    const c = await approvedCode(storeId);
    const other = await registered();
    for (const over of [
      { code_verifier: pkcePair().verifier },
      { redirect_uri: 'http://127.0.0.1:10/callback' },
      { resource: API_RESOURCE },
      { resource: 'https://evil.example.com/api/v1/integrations/mcp' },
      { client_id: other.client_id },
    ])
      expect(await exchange(c, over), JSON.stringify(over)).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect(await exchange(c, {}, Date.now() + 61_000)).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect(await exchange(c, { code_verifier: undefined })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(await exchange(c, { grant_type: 'password' })).toMatchObject({ ok: false, error: 'unsupported_grant_type' });
    expect(await exchange(c)).toMatchObject({ ok: true });
  });

  it("refuses a redirect_uri other than the authorize request's, even one the client registered", async () => {
    const other = 'http://127.0.0.1:9/other';
    const c = await approvedCode(await newStore(), {}, [REDIRECT, other]);
    expect(await exchange(c, { redirect_uri: other })).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect(await exchange(c)).toMatchObject({ ok: true });
  });

  it.each(['code', 'code_verifier', 'redirect_uri', 'client_id'])(
    'refuses a code exchange without %s as an invalid request, and spends nothing',
    async (missing) => {
      const c = await approvedCode(await newStore());
      expect(await exchange(c, { [missing]: undefined })).toMatchObject({ ok: false, error: 'invalid_request' });
      expect(await exchange(c)).toMatchObject({ ok: true });
    },
  );

  it('refuses a code whose grant the store admin revoked before the exchange', async () => {
    const c = await approvedCode(await newStore());
    await revokeKeyNow(c.keyId);
    expect(await exchange(c)).toEqual({ ok: false, error: 'invalid_grant', description: 'the grant is revoked' });
  });

  it('revokes the tokens issued from a code when the code comes back', async () => {
    const storeId = await newStore();
    const t = await tokensFor(storeId);
    expect(await serves(t.access)).toBe(true);
    expect(await exchange(t)).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect(await serves(t.access)).toBe(false);
    expect(await refresh(t.clientId, t.refresh)).toMatchObject({ ok: false, error: 'invalid_grant' });
  });

  it('rotates a refresh token; the rotated one answers the new pair for 30 s, then revokes the whole grant', async () => {
    const storeId = await newStore();
    const t = await tokensFor(storeId);
    const now = Date.now();
    const next = await refresh(t.clientId, t.refresh, now);
    expect(next).toMatchObject({ ok: true });
    if (!next.ok) return;
    expect(next.body.refresh_token).not.toBe(t.refresh);
    expect(await serves(next.body.access_token as string)).toBe(true);
    // A second refresh with the same token, within the window: the same pair.
    expect(await refresh(t.clientId, t.refresh, now + 10_000)).toMatchObject({
      ok: true,
      body: { access_token: next.body.access_token, refresh_token: next.body.refresh_token },
    });
    expect(await refresh(t.clientId, t.refresh, now + 31_000)).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect(await serves(next.body.access_token as string)).toBe(false);
    expect(await refresh(t.clientId, next.body.refresh_token as string, now + 32_000)).toMatchObject({ ok: false });
  });

  it('answers ten parallel refreshes with one refresh token with the same new pair and keeps the grant', async () => {
    const storeId = await newStore();
    const t = await tokensFor(storeId);
    const answers = await Promise.all(Array.from({ length: 10 }, () => refresh(t.clientId, t.refresh)));
    const pairs = new Set(answers.map((a) => (a.ok ? `${a.body.access_token} ${a.body.refresh_token}` : a.error)));
    expect(pairs.size).toBe(1);
    const [pair] = answers;
    if (!pair?.ok) throw new Error(JSON.stringify(pair));
    expect(await serves(pair.body.access_token as string)).toBe(true);
    const next = await refresh(t.clientId, pair.body.refresh_token as string);
    expect(next).toMatchObject({ ok: true });
    if (next.ok) expect(await serves(next.body.access_token as string)).toBe(true);
    expect((await existingKey(t.keyId)).status).toBe('active');
  });

  it('answers a rotated refresh token within the window with the current pair, after a second rotation', async () => {
    const t = await tokensFor(await newStore());
    const second = await refresh(t.clientId, t.refresh);
    if (!second.ok) throw new Error(JSON.stringify(second));
    const third = await refresh(t.clientId, second.body.refresh_token as string);
    if (!third.ok) throw new Error(JSON.stringify(third));
    // A late request with the first token: not the rotated-away second pair, the current one.
    const late = await refresh(t.clientId, t.refresh);
    expect(late).toMatchObject({
      ok: true,
      body: { access_token: third.body.access_token, refresh_token: third.body.refresh_token },
    });
    expect(await serves(third.body.access_token as string)).toBe(true);
    expect(await refresh(t.clientId, third.body.refresh_token as string)).toMatchObject({ ok: true });
  });

  it('refuses a refresh naming a resource outside the grant, and spends nothing', async () => {
    const t = await tokensFor(await newStore());
    for (const resource of [API_RESOURCE, 'https://evil.example.com/api/v1/integrations', `${MCP_RESOURCE}x`])
      expect(await refresh(t.clientId, t.refresh, Date.now(), { resource }), resource).toMatchObject({
        ok: false,
        error: 'invalid_grant',
      });
    expect(await refresh(t.clientId, t.refresh)).toMatchObject({ ok: true });
  });

  it('refuses a rotated refresh token within the window that names a resource outside the grant, and revokes nothing', async () => {
    const t = await tokensFor(await newStore());
    const rotated = await refresh(t.clientId, t.refresh);
    if (!rotated.ok) throw new Error(JSON.stringify(rotated));
    expect(await refresh(t.clientId, t.refresh, Date.now(), { resource: API_RESOURCE })).toMatchObject({
      ok: false,
      error: 'invalid_grant',
    });
    // The refusal neither hands out the pair nor revokes: within the window the same request without it does.
    expect(await refresh(t.clientId, t.refresh)).toMatchObject({
      ok: true,
      body: { access_token: rotated.body.access_token },
    });
    expect((await existingKey(t.keyId)).status).toBe('active');
  });

  it('hands no pair to a rotated refresh token within the window once the grant is revoked', async () => {
    const t = await tokensFor(await newStore());
    expect(await refresh(t.clientId, t.refresh)).toMatchObject({ ok: true });
    await revokeKeyNow(t.keyId);
    expect(await refresh(t.clientId, t.refresh)).toEqual({
      ok: false,
      error: 'invalid_grant',
      description: 'the grant is revoked',
    });
  });

  it('refuses a refresh without refresh_token or client_id, for another client, or expired; none revokes', async () => {
    const t = await tokensFor(await newStore(), API_RESOURCE);
    const other = await registered();
    const form = (over: Record<string, string | undefined>) =>
      exchangeToken(
        { grant_type: 'refresh_token', refresh_token: t.refresh, client_id: t.clientId, ...over },
        OAUTH_ISSUER,
        OAUTH_BASE_PATH,
        Date.now(),
      );
    expect(await form({ refresh_token: undefined })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(await form({ client_id: undefined })).toMatchObject({ ok: false, error: 'invalid_request' });
    expect(await form({ client_id: other.client_id })).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect(await refresh(t.clientId, t.refresh, Date.now() + 31 * 24 * 3600 * 1000)).toMatchObject({
      ok: false,
      error: 'invalid_grant',
    });
    expect((await authenticateToken(t.access, undefined, `${OAUTH_BASE_PATH}/products`)).ok).toBe(true);
    expect(await refresh(t.clientId, t.refresh)).toMatchObject({ ok: true });
    // The rotated token, presented by another client within the window, gets nothing.
    expect(await form({ client_id: other.client_id })).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect((await existingKey(t.keyId)).status).toBe('active');
  });
});
