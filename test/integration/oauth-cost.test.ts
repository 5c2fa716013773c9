import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { pollAuthorization, startAuthorization } from '#app/oauth/authorize.ts';
import type { Caller } from '#app/oauth/caller.ts';
import { approveAuthorization } from '#app/oauth/decisions.ts';
import { type FetchClientMetadata, registerClient } from '#app/oauth/register.ts';
import { exchangeToken } from '#app/oauth/token.ts';
import { db, tableName, withDbStats } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { CLIENT_SECONDS, UNUSED_CLIENT_SECONDS } from '#domain/oauth/oauth.ts';
import { createStore } from '#fixtures/api.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * What the token endpoint costs in DynamoDB calls (docs/oauth.md#tokens): the use case called
 * in-process against the run's store, inside withDbStats, as the OAuth Lambda runs it. A code
 * exchange and a refresh are each one read of what was presented, one of the grant's key and one
 * of its token item, then one transaction; a call more is a regression.
 */
const ISSUER = 'https://oauth-cost.example';
const REDIRECT = 'http://127.0.0.1:9/callback';
const VERIFIER = 'c'.repeat(43);
const caller: Caller = {
  ip: '203.0.113.7',
  userAgent: 'oauth-cost test',
  limits: { registrationsPerIp: 1_000_000, authorizationsPerIp: 1_000_000, pendingRequests: 1_000_000 },
};
const noDocuments: FetchClientMetadata = async () => ({ ok: false, reason: 'no documents in this test' });

/** A registered client (at `registeredAtMs`) up to an approved, redeemed authorization code. */
async function codeFor(storeId: string, registeredAtMs = Date.now()) {
  const registered = await registerClient(
    { client_name: 'Cost app', redirect_uris: [REDIRECT] },
    registeredAtMs,
    caller,
  );
  if (registered.kind !== 'registered') throw new Error(`registration: ${registered.kind}`);
  const clientId = registered.client.client_id;
  const started = await startAuthorization(
    {
      response_type: 'code',
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: createHash('sha256').update(VERIFIER).digest('base64url'),
      code_challenge_method: 'S256',
      scope: 'catalog:read',
    },
    ISSUER,
    API_BASE_PATH,
    Date.now(),
    noDocuments,
    caller,
  );
  if (started.kind !== 'waiting') throw new Error(`authorization: ${started.kind}`);
  await approveAuthorization(
    { code: started.request.approval_code, storeId, abilities: undefined, mcp: 'full', writesPerHour: null },
    Date.now(),
  );
  const done = await pollAuthorization(started.handle, ISSUER, Date.now());
  if (done.status !== 'done') throw new Error(`poll: ${done.status}`);
  return { clientId, code: new URL(done.redirect).searchParams.get('code')! };
}

const clientTtl = async (clientId: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: keys.oauthClient(clientId), ConsistentRead: true })))
    .Item?.ttl as number | undefined;

const exchange = (clientId: string, code: string, nowMs: number) =>
  withDbStats(() =>
    exchangeToken(
      {
        grant_type: 'authorization_code',
        code,
        code_verifier: VERIFIER,
        redirect_uri: REDIRECT,
        client_id: clientId,
      },
      ISSUER,
      API_BASE_PATH,
      nowMs,
    ),
  );

describe('OAuth token endpoint: DynamoDB calls per request', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });

  it('exchanges a code in 4 calls, keeping the client 90 days in the same transaction', async () => {
    const { clientId, code } = await codeFor(storeId);
    const nowMs = Date.now();
    const { result, stats } = await exchange(clientId, code, nowMs);
    expect(result.ok).toBe(true);
    expect(stats.ops).toEqual(['GetItem', 'GetItem', 'GetItem', 'TransactWriteItems']);
    expect(await clientTtl(clientId)).toBe(Math.ceil((nowMs + CLIENT_SECONDS * 1000) / 1000));
  });

  it('refreshes in 4 calls', async () => {
    const { clientId, code } = await codeFor(storeId);
    const { result: exchanged } = await exchange(clientId, code, Date.now());
    if (!exchanged.ok) throw new Error(`exchange: ${exchanged.error}`);
    const { result, stats } = await withDbStats(() =>
      exchangeToken(
        { grant_type: 'refresh_token', refresh_token: String(exchanged.body.refresh_token), client_id: clientId },
        ISSUER,
        API_BASE_PATH,
        Date.now(),
      ),
    );
    expect(result.ok).toBe(true);
    expect(stats.ops).toEqual(['GetItem', 'GetItem', 'GetItem', 'TransactWriteItems']);
  });

  it('still issues the tokens when the client expired since its authorization, and does not bring it back', async () => {
    // Registered a day ago less 20 s: alive for the authorize page, gone by an exchange 30 s later
    // (the code is good for 60 s).
    const registeredAtMs = Date.now() - UNUSED_CLIENT_SECONDS * 1000 + 20_000;
    const { clientId, code } = await codeFor(storeId, registeredAtMs);
    const ttl = await clientTtl(clientId);
    const { result, stats } = await exchange(clientId, code, Date.now() + 30_000);
    expect(result.ok).toBe(true);
    // The keep-alive's condition cancels the first transaction; the second issues without it.
    expect(stats.ops).toEqual(['GetItem', 'GetItem', 'GetItem', 'TransactWriteItems', 'TransactWriteItems']);
    expect(await clientTtl(clientId)).toBe(ttl);
  });
});
