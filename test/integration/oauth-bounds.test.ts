import { newContext } from '#shared/context.ts';
import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { pollAuthorization, startAuthorization } from '#app/oauth/authorize.ts';
import { type FetchClientMetadata, registerClient } from '#app/oauth/register.ts';
import { exchangeToken } from '#app/oauth/token.ts';
import { handler } from '#functions/oauth/handler.ts';
import { adminCommand, createStore } from '#fixtures/api.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { LIMIT_WINDOW_SECONDS, type OAuthLimits } from '#domain/oauth/bounds.ts';
import { config } from '#shared/config.ts';
import { createHash, randomBytes } from 'node:crypto';

/**
 * The bounds on registration and authorization (docs/oauth.md#bounds), in-process against the
 * run's store: the OAuth Lambda's handler with an API Gateway event from an address of the test's
 * own (the shared stack's HTTP flows all come from 127.0.0.1 and run with raised bounds), and the
 * use cases at a time of the test's own where a count is everyone's (a window nobody else uses).
 */
const ISSUER = 'https://oauth-bounds.example';
const REDIRECT = 'http://127.0.0.1:9/callback';
const DEFAULTS: OAuthLimits = config().oauthLimits;
/** An address nobody else in the run uses (in IPv6's documentation prefix). */
const freshIp = () =>
  `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::${randomInt(1, 65535).toString(16)}`;
/** A window of its own: a random 10-minute window within the next few years. */
const freshWindow = () => (Math.floor(Date.now() / 600_000) + randomInt(1000, 100_000)) * 600_000 + 1000;

function oauthEvent(ip: string, method: string, resource: string, over: Record<string, unknown> = {}) {
  return gatewayEvent(
    { resource, path: resource, httpMethod: method, headers: { host: 'oauth-bounds.example' }, ...over },
    { identity: { sourceIp: ip }, path: resource },
  );
}

const registerOver = (ip: string, body: unknown) =>
  handler(
    oauthEvent(ip, 'POST', '/oauth/register', {
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    }),
    {} as never,
  );

const challenge = () => createHash('sha256').update('v'.repeat(43)).digest('base64url');
const authorizeQuery = (clientId: string) => ({
  response_type: 'code',
  client_id: clientId,
  redirect_uri: REDIRECT,
  code_challenge: challenge(),
  code_challenge_method: 'S256',
  scope: 'catalog:read',
});
/** The client a metadata document would give: the bound is counted before any document is fetched. */
const documentClient: FetchClientMetadata = async (clientId) => ({
  ok: true,
  client: { client_id: clientId, client_name: 'Bounds client', redirect_uris: [REDIRECT] },
});

describe('OAuth bounds: registration', () => {
  it(`answers registration number ${DEFAULTS.registrationsPerIp + 1} from one address in 10 minutes 429 with Retry-After`, async () => {
    const ip = freshIp();
    const body = { client_name: 'Flood', redirect_uris: [REDIRECT] };
    for (let n = 0; n < DEFAULTS.registrationsPerIp; n++) expect((await registerOver(ip, body)).statusCode).toBe(201);
    const refused = await registerOver(ip, body);
    expect(refused.statusCode).toBe(429);
    const retryAfter = Number(refused.headers?.['Retry-After']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(LIMIT_WINDOW_SECONDS);
    expect(JSON.parse(refused.body)).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.any(String),
    });
    // Another address is not held back by this one.
    expect((await registerOver(freshIp(), body)).statusCode).toBe(201);
  });

  it('counts refused registrations too: a prober cannot try bodies without end', async () => {
    const ip = freshIp();
    for (let n = 0; n < DEFAULTS.registrationsPerIp; n++)
      expect((await registerOver(ip, { redirect_uris: ['javascript:alert(1)'] })).statusCode).toBe(400);
    expect((await registerOver(ip, { redirect_uris: [REDIRECT] })).statusCode).toBe(429);
  });

  it('refuses more than 10 redirect URIs, one over 2,000 characters and more than 8 KB in all', async () => {
    const at = (n: number, length: number) => `https://app.example/${String(n).padStart(3, '0')}/${'a'.repeat(length)}`;
    const reasons = async (uris: string[]) => {
      const res = await registerOver(freshIp(), { redirect_uris: uris });
      return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, string> };
    };
    expect((await reasons(Array.from({ length: 11 }, (_, n) => at(n, 10)))).status).toBe(400);
    const long = await reasons([at(0, 2000)]);
    expect(long.status).toBe(400);
    expect(long.body.error_description).toContain('2000 characters');
    // Five URIs of 1,900 characters: each within its bound, 9.5 KB together.
    const big = await reasons(Array.from({ length: 5 }, (_, n) => at(n, 1900)));
    expect(big).toMatchObject({ status: 400, body: { error: 'invalid_client_metadata' } });
    expect(big.body.error_description).toContain('8192 bytes');
    // Four of them fit (7.6 KB).
    expect((await reasons(Array.from({ length: 4 }, (_, n) => at(n, 1900)))).status).toBe(201);
  });

  it('forgets a registration never used after a day; one that got a token is kept', async () => {
    const caller = { ip: freshIp(), userAgent: null, limits: DEFAULTS };
    const now = Date.now();
    const unused = await registerClient(
      newContext(),
      { client_name: 'Unused', redirect_uris: [REDIRECT] },
      now,
      caller,
    );
    const used = await registerClient(newContext(), { client_name: 'Used', redirect_uris: [REDIRECT] }, now, caller);
    if (unused.kind !== 'registered' || used.kind !== 'registered') throw new Error('registration refused');
    const start = (clientId: string, at: number) =>
      startAuthorization(newContext(), authorizeQuery(clientId), ISSUER, API_BASE_PATH, at, documentClient, {
        ip: freshIp(),
        userAgent: null,
        limits: DEFAULTS,
      });
    // `used` goes through the whole flow to its first token.
    const started = await start(used.client.client_id, now);
    if (started.kind !== 'waiting') throw new Error(`authorization refused: ${started.kind}`);
    const storeId = await createStore();
    await adminCommand('oauth approve', { code: started.request.approval_code, store: storeId });
    const polled = await pollAuthorization(newContext(), started.handle, ISSUER, Date.now());
    if (polled.status !== 'done') throw new Error('not approved');
    const code = new URL(polled.redirect).searchParams.get('code')!;
    const tokens = await exchangeToken(
      newContext(),
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: 'v'.repeat(43),
        redirect_uri: REDIRECT,
        client_id: used.client.client_id,
      },
      ISSUER,
      API_BASE_PATH,
      Date.now(),
    );
    expect(tokens.ok).toBe(true);

    const dayAndAnHour = now + 25 * 3600 * 1000;
    const gone = await start(unused.client.client_id, dayAndAnHour);
    expect(gone).toMatchObject({ kind: 'refused', message: expect.stringContaining('not a registered client') });
    expect((await start(used.client.client_id, dayAndAnHour)).kind).toBe('waiting');
    // Within the day, the unused one still works.
    expect((await start(unused.client.client_id, now + 23 * 3600 * 1000)).kind).toBe('waiting');
  });
});

describe('OAuth bounds: authorization requests', () => {
  it(`answers authorize request number ${DEFAULTS.authorizationsPerIp + 1} from one address 429 as JSON`, async () => {
    const ip = freshIp();
    const authorize = () =>
      handler(
        oauthEvent(ip, 'GET', '/oauth/authorize', {
          // A client id that can never resolve: each request is refused on the page, and still counts.
          queryStringParameters: authorizeQuery('oc_00000000000000000000000000000000'),
        }),
        {} as never,
      );
    for (let n = 0; n < DEFAULTS.authorizationsPerIp; n++) expect((await authorize()).statusCode).toBe(400);
    const refused = await authorize();
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers?.['Retry-After'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toEqual({
      error: 'temporarily_unavailable',
      error_description: expect.any(String),
    });
  });

  it('caps the requests waiting for the admin from everyone, and lets more in the next window', async () => {
    const at = freshWindow();
    const limits = { ...DEFAULTS, pendingRequests: 3 };
    let fetched = 0;
    const counting: FetchClientMetadata = (clientId) => {
      fetched++;
      return documentClient(clientId);
    };
    const start = (nowMs: number) =>
      startAuthorization(
        newContext(),
        authorizeQuery('https://bounds.example/client.json'),
        ISSUER,
        API_BASE_PATH,
        nowMs,
        counting,
        {
          ip: freshIp(),
          userAgent: null,
          limits,
        },
      );
    for (let n = 0; n < 3; n++) expect((await start(at + n)).kind).toBe('waiting');
    const refused = await start(at + 10);
    expect(refused).toMatchObject({ kind: 'limited' });
    expect(fetched).toBe(4);
    expect((await start(at + LIMIT_WINDOW_SECONDS * 1000)).kind).toBe('waiting');
  });

  it('caps the requests of one address even when each comes from a valid client', async () => {
    const at = freshWindow();
    const caller = { ip: freshIp(), userAgent: null, limits: { ...DEFAULTS, authorizationsPerIp: 2 } };
    let fetched = 0;
    const counting: FetchClientMetadata = (clientId) => {
      fetched++;
      return documentClient(clientId);
    };
    const start = () =>
      startAuthorization(
        newContext(),
        authorizeQuery('https://bounds.example/client.json'),
        ISSUER,
        API_BASE_PATH,
        at,
        counting,
        caller,
      );
    expect((await start()).kind).toBe('waiting');
    expect((await start()).kind).toBe('waiting');
    expect(await start()).toMatchObject({ kind: 'limited', retryAfterSeconds: expect.any(Number) });
    // The refused request fetched no metadata document: a flood cannot make the server fetch.
    expect(fetched).toBe(2);
  });
});
