import { newContext } from '#shared/context.ts';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { db, tableName } from '#db/core/client.ts';
import { getKey } from '#db/key/repo.ts';
import { type Key, keys } from '#db/keys.ts';
import { getRefresh } from '#db/oauth/token.repo.ts';
import { hashToken } from '#domain/key/api-key.ts';
import { REFRESH_GRACE_SECONDS, REFRESH_TOKEN_SECONDS } from '#domain/oauth/oauth.ts';
import { createStore } from '#fixtures/api.ts';
import { grantInProcess, refreshInProcess } from '#fixtures/oauth-grant.ts';

/**
 * A rotated refresh token keeps its record for its 30 days, so that a reuse after the grace window
 * is recognised and revokes the grant; the pair it was rotated to (sealed under it, kept to answer
 * a parallel refresh within the window) is no longer needed after the window, and goes with it
 * (docs/oauth.md#tokens). The use case in-process against the run's store, the items read raw.
 */
const raw = async (key: Key) =>
  (await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: true }))).Item;

describe("OAuth: a rotated refresh token's sealed successor", () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });

  it('keeps the used token 30 days without the new pair, and the sealed pair only for the grace window', async () => {
    const { clientId, refreshToken } = await grantInProcess(storeId);
    const rotatedAt = Date.now();
    const out = await refreshInProcess(clientId, refreshToken, rotatedAt);
    if (!out.ok) throw new Error(`refresh: ${out.error}`);
    const hash = hashToken(refreshToken);

    const used = await raw(keys.oauthRefresh(hash));
    expect(used).toMatchObject({ status: 'used', rotated_at: rotatedAt });
    expect(used!.ttl).toBeGreaterThan((rotatedAt + (REFRESH_TOKEN_SECONDS - 3600) * 1000) / 1000);
    expect(used).not.toHaveProperty('successor');
    expect(JSON.stringify(used)).not.toContain(String(out.body.refresh_token));

    const successor = await raw(keys.oauthSuccessor(hash));
    expect(successor?.ttl).toBe(Math.ceil((rotatedAt + REFRESH_GRACE_SECONDS * 1000) / 1000));
    expect(successor?.sealed).toEqual(expect.any(String));
    expect(JSON.stringify(successor)).not.toContain(String(out.body.refresh_token));
    expect(JSON.stringify(successor)).not.toContain(String(out.body.access_token));
  });

  it('answers the pair within the window; after it ignores the sealed pair still stored, and a reuse revokes the grant', async () => {
    const { clientId, keyId, refreshToken } = await grantInProcess(storeId);
    const rotatedAt = Date.now();
    const first = await refreshInProcess(clientId, refreshToken, rotatedAt);
    if (!first.ok) throw new Error(`refresh: ${first.error}`);
    const hash = hashToken(refreshToken);
    const lastMs = rotatedAt + REFRESH_GRACE_SECONDS * 1000 - 1;

    expect((await getRefresh(newContext(), hash, lastMs))?.successor).toEqual(expect.any(String));
    const late = await refreshInProcess(clientId, refreshToken, lastMs);
    expect(late).toMatchObject({
      ok: true,
      body: { access_token: first.body.access_token, refresh_token: first.body.refresh_token },
    });

    // Past the window: the item is still in the table (DynamoDB's TTL sweep comes later, if at
    // all on DynamoDB Local), but no longer read; the used token's record still is.
    const afterMs = rotatedAt + REFRESH_GRACE_SECONDS * 1000;
    expect(await raw(keys.oauthSuccessor(hash))).toBeDefined();
    expect(await getRefresh(newContext(), hash, afterMs)).toMatchObject({ status: 'used', successor: null });
    const reuse = await refreshInProcess(clientId, refreshToken, afterMs);
    expect(reuse).toMatchObject({ ok: false, error: 'invalid_grant' });
    expect((await getKey(newContext(), keyId))?.status).toBe('revoked');
  });
});
