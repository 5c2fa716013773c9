import { newContext } from '#shared/context.ts';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { pollAuthorization } from '#app/oauth/authorize.ts';
import { showAuthorization } from '#app/oauth/decisions.ts';
import { getKey } from '#db/key/repo.ts';
import { normalizeApprovalCode, REQUEST_SECONDS } from '#domain/oauth/oauth.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { METADATA_NOT_FETCHED } from '#functions/oauth/client-metadata.ts';
import { adminCommand, baseUrl, createStore } from '#fixtures/api.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * What the store admin approves, and what an approval leaves behind (docs/oauth.md#approving-safely,
 * issue 59 items 8 and 10): a request dressed up as a real app's shows what it is (its client_id,
 * its name unverified, the IP and User-Agent that opened it), the list of waiting requests shows no
 * approval code, names lose the characters that make them look like others; an approval never
 * picked up leaves no key and expires with its request; the page's secret is compared in constant
 * time; a metadata document that cannot be fetched says one fixed sentence; a 401 names both kinds
 * of credential. The page's clock is moved in-process, as test/integration/oauth.test.ts does for
 * an expired code.
 */
const crypto = vi.hoisted(() => ({ timingSafeEqualCalls: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  const timingSafeEqual: typeof actual.timingSafeEqual = (a, b) => {
    crypto.timingSafeEqualCalls++;
    return actual.timingSafeEqual(a, b);
  };
  return { ...actual, default: { ...actual, timingSafeEqual }, timingSafeEqual };
});

const root = () => baseUrl().slice(0, -API_BASE_PATH.length);
const CLAUDE_CALLBACK = 'https://claude.ai/api/mcp/auth_callback';
const LOOPBACK = 'http://127.0.0.1:9/callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

interface ShownRequest {
  approval_code: string;
  client_id: string;
  client_name: string;
  name_verified: boolean;
  name_verified_by: string | null;
  redirect_host: string;
  ip: string | null;
  user_agent: string | null;
  created_at: string;
  age_seconds: number;
  status: string;
}

async function adminError(command: string, args: Record<string, unknown>) {
  const out = await admin({ command, args });
  if (out.ok) throw new Error(`${command} succeeded unexpectedly`);
  return out.error;
}

async function register(name: string, redirectUris: string[]) {
  const res = await fetch(`${root()}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: redirectUris }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { client_id: string; client_name: string };
}

/** The authorize page as a browser with `userAgent` opens it: its status, text, approval code and poll handle. */
async function authorize(clientId: string, redirectUri: string, userAgent = 'TestBrowser/1.0') {
  const url = new URL(`${root()}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    scope: 'catalog:read orders:read',
    state: 'st',
  }))
    url.searchParams.set(k, v);
  const res = await fetch(url, { redirect: 'manual', headers: { 'User-Agent': userAgent } });
  const page = await res.text();
  const found = /id="approval-code" data-request="([^"]+)">([^<]+)</.exec(page);
  return { status: res.status, page, handle: found?.[1], code: found?.[2] };
}

const show = (code: string) => adminCommand<ShownRequest>('oauth show', { code });
const waitingList = async () =>
  (await adminCommand<{ data: Omit<ShownRequest, 'approval_code'>[] }>('oauth requests')).data;
const keyIdsOf = async (store: string) =>
  (await adminCommand<{ data: { id: number; status: string }[] }>('keys list', { store })).data;

/** A local Client ID Metadata Document server (the stack fetches loopback URLs under ALLOW_PRIVATE_WEBHOOKS). */
async function documentServer(answer: (url: string) => { status: number; body: string }) {
  let documentUrl = '';
  const server: Server = createServer((_req, res) => {
    const { status, body } = answer(documentUrl);
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  documentUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/client.json`;
  return { documentUrl, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('OAuth: an approval that cannot be spoofed', () => {
  let metadata: Awaited<ReturnType<typeof documentServer>>;
  beforeAll(async () => {
    metadata = await documentServer((url) => ({
      status: 200,
      body: JSON.stringify({ client_id: url, client_name: 'Meta\u200Bdata\u202E client', redirect_uris: [LOOPBACK] }),
    }));
  });
  afterAll(() => metadata?.close());

  it('shows a registration named "Claude" as unverified, with its client_id, the IP and User-Agent that opened it, and its age', async () => {
    const spoof = await register('Claude', [CLAUDE_CALLBACK]);
    const started = await authorize(spoof.client_id, CLAUDE_CALLBACK, 'Mallory/6.6 (spoofer)');
    expect(started.status).toBe(200);
    const expected = {
      client_id: spoof.client_id,
      client_name: 'Claude',
      name_verified: false,
      name_verified_by: null,
      redirect_host: 'claude.ai',
      ip: expect.stringMatching(/(^|:)127\.0\.0\.1$/),
      user_agent: 'Mallory/6.6 (spoofer)',
      created_at: expect.stringMatching(/Z$/),
      age_seconds: expect.any(Number),
    };
    expect(await show(started.code!)).toMatchObject({ ...expected, approval_code: started.code, status: 'pending' });
    expect((await waitingList()).find((r) => r.client_id === spoof.client_id)).toMatchObject(expected);
    await adminCommand('oauth deny', { code: started.code });
  });

  it("shows a metadata document's name as verified by the host that serves it", async () => {
    const started = await authorize(metadata.documentUrl, LOOPBACK);
    expect(started.status).toBe(200);
    expect(await show(started.code!)).toMatchObject({
      client_id: metadata.documentUrl,
      client_name: 'Metadata client',
      name_verified: true,
      name_verified_by: new URL(metadata.documentUrl).host,
    });
    await adminCommand('oauth deny', { code: started.code });
  });

  it('lists the waiting requests without their approval codes: nothing the list shows approves', async () => {
    const spoof = await register('Claude', [CLAUDE_CALLBACK]);
    const started = await authorize(spoof.client_id, CLAUDE_CALLBACK);
    const code = started.code!;
    const list = await waitingList();
    const row = list.find((r) => r.client_id === spoof.client_id)!;
    expect(row).toBeDefined();
    expect(row).not.toHaveProperty('approval_code');
    const text = JSON.stringify(list);
    expect(text).not.toContain(code);
    expect(text).not.toContain(code.replace('-', ''));
    // Whatever an admin copies from the row, it names no request: only the user's code does.
    for (const value of Object.values(row).filter((v): v is string => typeof v === 'string')) {
      expect(normalizeApprovalCode(value), value).not.toBe(code);
      expect((await adminError('oauth approve', { code: value, store: 'any' })).code).toMatch(
        /^(not_found|validation_failed)$/,
      );
    }
    expect((await show(code)).status).toBe('pending');
    await adminCommand('oauth deny', { code });
  });

  it('approves the request whose code the user read out, never the look-alike beside it', async () => {
    const store = await createStore();
    const real = await register('Claude', [CLAUDE_CALLBACK]);
    const spoof = await register('Claude', [CLAUDE_CALLBACK]);
    const user = await authorize(real.client_id, CLAUDE_CALLBACK);
    const outsider = await authorize(spoof.client_id, CLAUDE_CALLBACK);
    await adminCommand('oauth approve', { code: user.code, store });
    const poll = (handle: string) => pollAuthorization(newContext(), handle, root(), Date.now());
    expect(await poll(outsider.handle!)).toEqual({ status: 'pending' });
    const done = await poll(user.handle!);
    expect(done.status).toBe('done');
    expect(new URL((done as { redirect: string }).redirect).searchParams.get('code')).toMatch(/^sic_/);
    await adminCommand('oauth deny', { code: outsider.code });
  });

  it('drops format and control characters from names: at registration and from a metadata document', async () => {
    const registered = await register('Cl\u200Bau\u202Ede\u0007 \u2066Bot\u2069\n', [LOOPBACK]);
    expect(registered.client_name).toBe('Claude Bot');
    const started = await authorize(registered.client_id, LOOPBACK);
    expect((await show(started.code!)).client_name).toBe('Claude Bot');
    await adminCommand('oauth deny', { code: started.code });
    // Nothing left but invisible characters: the client is shown by its client_id.
    const invisible = await register('\u200B\u200D\u202E', [LOOPBACK]);
    expect(invisible.client_name).toBe(invisible.client_id);

    const fromDocument = await authorize(metadata.documentUrl, LOOPBACK);
    expect(fromDocument.page).toContain('Metadata client asks');
    expect((await show(fromDocument.code!)).client_name).toBe('Metadata client');
    await adminCommand('oauth deny', { code: fromDocument.code });
  });
});

describe('OAuth: what an approval leaves behind', () => {
  let store: string;
  beforeAll(async () => {
    store = await createStore();
  });

  it('leaves no key for an approval the page never picks up, and redeems nothing once the request expired', async () => {
    const client = await register('Never picked up', [LOOPBACK]);
    const started = await authorize(client.client_id, LOOPBACK);
    const approved = await adminCommand<{ key_id: number }>('oauth approve', { code: started.code, store });
    // Approved, not picked up: no key is listed, let alone an active one that nobody will ever use.
    expect((await keyIdsOf(store)).map((k) => k.id)).not.toContain(approved.key_id);
    expect(await getKey(newContext(), approved.key_id)).toBeUndefined();
    // The page comes back after the request expired, before DynamoDB's TTL sweep removes it.
    const late = Date.now() + (REQUEST_SECONDS + 60) * 1000;
    expect(await showAuthorization(newContext(), started.code!, late)).toMatchObject({ status: 'expired' });
    const answer = await pollAuthorization(newContext(), started.handle!, root(), late);
    expect(answer.status).toBe('done');
    const back = new URL((answer as { redirect: string }).redirect);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('code')).toBeNull();
    expect((await keyIdsOf(store)).map((k) => k.id)).not.toContain(approved.key_id);
    expect(await getKey(newContext(), approved.key_id)).toBeUndefined();
  });

  it("writes the grant's key when the page picks the approval up: listed as a grant, and revocable", async () => {
    const client = await register('Picked up', [LOOPBACK]);
    const started = await authorize(client.client_id, LOOPBACK);
    const approved = await adminCommand<{ key_id: number }>('oauth approve', {
      code: started.code,
      store,
      abilities: 'catalog:read',
    });
    const done = await pollAuthorization(newContext(), started.handle!, root(), Date.now());
    expect(done.status).toBe('done');
    const keys = await adminCommand<{ data: Record<string, unknown>[] }>('keys list', { store });
    expect(keys.data.find((k) => k.id === approved.key_id)).toMatchObject({
      name: 'oauth: Picked up',
      kind: 'grant',
      client_id: client.client_id,
      abilities: ['catalog:read'],
      status: 'active',
    });
    // Picked up once: a second poll gets nothing more.
    expect(await pollAuthorization(newContext(), started.handle!, root(), Date.now())).toEqual({ status: 'unknown' });
    await adminCommand('keys revoke', { id: approved.key_id });
    expect((await keyIdsOf(store)).find((k) => k.id === approved.key_id)?.status).toBe('revoked');
  });

  it("compares the page's secret with the stored hash in constant time", async () => {
    const client = await register('Timing', [LOOPBACK]);
    const started = await authorize(client.client_id, LOOPBACK);
    const wrong = `${started.code}.sis_${'A'.repeat(43)}`;
    const before = crypto.timingSafeEqualCalls;
    expect(await pollAuthorization(newContext(), wrong, root(), Date.now())).toEqual({ status: 'unknown' });
    expect(crypto.timingSafeEqualCalls).toBeGreaterThan(before);
    const right = crypto.timingSafeEqualCalls;
    expect(await pollAuthorization(newContext(), started.handle!, root(), Date.now())).toEqual({ status: 'pending' });
    expect(crypto.timingSafeEqualCalls).toBeGreaterThan(right);
    await adminCommand('oauth deny', { code: started.code });
  });

  it('answers a metadata document it cannot fetch or read with one fixed sentence, never the cause', async () => {
    const closed = await documentServer(() => ({ status: 200, body: '{}' }));
    await closed.close();
    const missing = await documentServer(() => ({ status: 404, body: 'Not Found' }));
    const notJson = await documentServer(() => ({ status: 200, body: 'SSH-2.0-OpenSSH_9.6' }));
    try {
      for (const clientId of [closed.documentUrl, missing.documentUrl, notJson.documentUrl]) {
        const started = await authorize(clientId, LOOPBACK);
        expect(started.status, clientId).toBe(400);
        expect(started.page, clientId).toContain(METADATA_NOT_FETCHED);
        expect(started.page, clientId).not.toMatch(/ECONNREFUSED|HTTP 404|SSH|Unexpected token|127\.0\.0\.1:\d+/);
      }
    } finally {
      await missing.close();
      await notJson.close();
    }
  });

  it('tells a caller without a valid credential that an API key or an OAuth access token is required', async () => {
    const anonymous = await fetch(`${baseUrl()}/mcp`, { method: 'POST', body: '{}' });
    expect(anonymous.status).toBe(401);
    const badToken = await fetch(`${baseUrl()}/products`, {
      headers: { Authorization: `Bearer sio_${'A'.repeat(43)}` },
    });
    expect(badToken.status).toBe(401);
    for (const res of [anonymous, badToken]) {
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('unauthenticated');
      expect(body.message).toContain('OAuth access token');
      expect(body.message).not.toMatch(/^A valid API key is required/);
    }
  });
});
