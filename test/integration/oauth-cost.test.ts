import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '#db/core/client.ts';
import { counted } from '#fixtures/context.ts';
import { keys } from '#db/keys.ts';
import { CLIENT_SECONDS, UNUSED_CLIENT_SECONDS } from '#domain/oauth/oauth.ts';
import { createStore } from '#fixtures/api.ts';
import { codeInProcess, exchangeInProcess, grantInProcess, refreshInProcess } from '#fixtures/oauth-grant.ts';

/**
 * What the token endpoint costs in DynamoDB calls (docs/oauth.md#tokens): the use case called
 * in-process against the run's store, counted in its request context, as the OAuth Lambda runs it. A code
 * exchange and a refresh are each one read of what was presented, one of the grant's key and one
 * of its token item, then one transaction; a call more is a regression.
 */
const clientTtl = async (clientId: string) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: keys.oauthClient(clientId), ConsistentRead: true })))
    .Item?.ttl as number | undefined;

describe('OAuth token endpoint: DynamoDB calls per request', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });

  it('exchanges a code in 4 calls, keeping the client 90 days in the same transaction', async () => {
    const { clientId, code } = await codeInProcess(storeId);
    const nowMs = Date.now();
    const { result, stats } = await counted((ctx) => exchangeInProcess(clientId, code, nowMs, ctx));
    expect(result.ok).toBe(true);
    expect(stats.ops).toEqual(['GetItem', 'GetItem', 'GetItem', 'TransactWriteItems']);
    expect(await clientTtl(clientId)).toBe(Math.ceil((nowMs + CLIENT_SECONDS * 1000) / 1000));
  });

  it('refreshes in 4 calls: the refresh token with its successor in one BatchGetItem', async () => {
    const { clientId, refreshToken } = await grantInProcess(storeId);
    const { result, stats } = await counted((ctx) => refreshInProcess(clientId, refreshToken, Date.now(), ctx));
    expect(result.ok).toBe(true);
    expect(stats.ops).toEqual(['BatchGetItem', 'GetItem', 'GetItem', 'TransactWriteItems']);
  });

  it('still issues the tokens when the client expired since its authorization, and does not bring it back', async () => {
    // Registered a day ago less 20 s: alive for the authorize page, gone by an exchange 30 s later
    // (the code is good for 60 s).
    const registeredAtMs = Date.now() - UNUSED_CLIENT_SECONDS * 1000 + 20_000;
    const { clientId, code } = await codeInProcess(storeId, registeredAtMs);
    const ttl = await clientTtl(clientId);
    const { result, stats } = await counted((ctx) => exchangeInProcess(clientId, code, Date.now() + 30_000, ctx));
    expect(result.ok).toBe(true);
    // The keep-alive's condition cancels the first transaction; the second issues without it.
    expect(stats.ops).toEqual(['GetItem', 'GetItem', 'GetItem', 'TransactWriteItems', 'TransactWriteItems']);
    expect(await clientTtl(clientId)).toBe(ttl);
  });
});
