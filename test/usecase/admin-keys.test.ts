import { describe, expect, it } from 'vitest';
import {
  allStores,
  authenticateToken,
  changeKeySettings,
  changeKeyWebhook,
  existingKey,
  issueKey,
  keysOfStore,
  newKey,
  newStore,
  openSecret,
  openStore,
  outcome,
  revokeKeyNow,
  rotateKey,
  sealSecret,
  unique,
} from '#fixtures/usecase.ts';
import { hashToken } from '#domain/key/api-key.ts';

/**
 * The admin's store and key commands (shared/app/admin-keys.ts) called in-process, and what the
 * authorizer's use case (shared/app/authenticate.ts) makes of a key afterwards. The admin CLI's
 * argument checks and output are test/integration/admin-cli.test.ts's.
 */
describe('stores', () => {
  it('opens a store once: the same id again is a conflict naming id, and the list holds it', async () => {
    const id = unique('uc');
    expect(await openStore({ id, name: 'Shop', currency: 'SEK' })).toMatchObject({ id, currency_code: 'SEK' });
    expect(await outcome(openStore({ id, name: 'Again', currency: 'EUR' }))).toMatchObject({
      kind: 'refused',
      code: 'conflict',
      field: 'id',
    });
    expect((await allStores()).find((s) => s.id === id)).toMatchObject({ name: 'Shop', currency_code: 'SEK' });
  });
});

describe('keys', () => {
  it('issues a key whose token the authorizer takes, storing only its hash and the webhook secret sealed', async () => {
    const storeId = await newStore('SEK');
    const input = {
      store: storeId,
      name: 'ERP',
      abilities: ['catalog:read' as const, 'orders:read' as const],
      webhookUrl: 'https://erp.example.com/hook',
      events: ['order.created'],
      excludeOwn: true,
      mcp: 'read-only' as const,
      writesPerHour: 100,
      statusChangesPerHour: null,
    };
    const { record, token, webhookSecret } = await issueKey(input, sealSecret);
    expect(record).toMatchObject({
      store_id: storeId,
      name: 'ERP',
      abilities: ['catalog:read', 'orders:read'],
      status: 'active',
      webhook_url: 'https://erp.example.com/hook',
      events: ['order.created'],
      exclude_own: true,
      mcp: 'read-only',
      writes_per_hour: 100,
      token_hash: hashToken(token),
    });
    // The secret is stored sealed, and the signer opens it to what the admin was shown once.
    expect(record.webhook_secret).not.toContain(webhookSecret);
    expect(await openSecret(record.webhook_secret)).toBe(webhookSecret);
    const auth = await authenticateToken(token);
    expect(auth).toMatchObject({
      ok: true,
      principal: {
        keyId: record.id,
        storeId,
        currency: 'SEK',
        abilities: ['catalog:read', 'orders:read'],
        mcpReadOnly: true,
        budget: { writes: 100, statusChanges: null },
      },
    });
    expect((await keysOfStore(storeId)).map((k) => k.id)).toEqual([record.id]);
  });

  it('refuses a key for a store that does not exist, and names the store or key an admin command got wrong', async () => {
    const missing = unique('nostore');
    expect(
      await outcome(
        issueKey(
          {
            store: missing,
            name: 'x',
            abilities: ['catalog:read'],
            webhookUrl: null,
            events: [],
            excludeOwn: false,
            mcp: 'full',
            writesPerHour: null,
            statusChangesPerHour: null,
          },
          sealSecret,
        ),
      ),
    ).toMatchObject({ kind: 'refused', code: 'not_found', field: 'store' });
    expect(await outcome(keysOfStore(missing))).toMatchObject({ code: 'not_found', field: 'store' });
    expect(await outcome(existingKey(2 ** 31))).toMatchObject({ code: 'not_found', field: 'id' });
    expect(await outcome(rotateKey(2 ** 31))).toMatchObject({ code: 'not_found', field: 'id' });
  });

  it('rotates a token: the old one stops at once, the new one serves the same key id', async () => {
    const storeId = await newStore();
    const { caller, token } = await newKey(storeId, ['catalog:read']);
    expect(await authenticateToken(token)).toMatchObject({ ok: true, principal: { keyId: caller.keyId } });
    const rotated = await rotateKey(caller.keyId);
    expect(rotated.record).toMatchObject({ id: caller.keyId, token_hash: hashToken(rotated.token) });
    expect(await authenticateToken(token)).toEqual({ ok: false });
    expect(await authenticateToken(rotated.token)).toMatchObject({ ok: true, principal: { keyId: caller.keyId } });
  });

  it('revokes a key: its token stops, and a revoked key cannot be rotated back to life', async () => {
    const storeId = await newStore();
    const { caller, token } = await newKey(storeId);
    expect(await authenticateToken(token)).toMatchObject({ ok: true });
    const revoked = await revokeKeyNow(caller.keyId);
    expect(revoked).toMatchObject({ id: caller.keyId, status: 'revoked', revoked_at: expect.any(String) });
    expect(await authenticateToken(token)).toEqual({ ok: false });
    expect(await outcome(rotateKey(caller.keyId))).toMatchObject({ code: 'invalid_transition', field: 'id' });
    expect((await existingKey(caller.keyId)).status).toBe('revoked');
  });

  it('changes the webhook and the settings, which the next request of the key sees', async () => {
    const storeId = await newStore();
    const { caller, token } = await newKey(storeId);
    const changed = await changeKeyWebhook(caller.keyId, {
      webhook_url: 'https://crm.example.com/in',
      events: ['product.updated:price'],
      exclude_own: true,
    });
    expect(changed).toMatchObject({
      webhook_url: 'https://crm.example.com/in',
      events: ['product.updated:price'],
      exclude_own: true,
    });
    expect(await changeKeyWebhook(caller.keyId, { webhook_url: null })).toMatchObject({ webhook_url: null });
    const before = await authenticateToken(token);
    expect(before.ok && before.principal.mcpReadOnly).toBeFalsy();
    expect(await changeKeySettings(caller.keyId, { mcp: 'read-only', writes_per_hour: 5 })).toMatchObject({
      mcp: 'read-only',
      writes_per_hour: 5,
    });
    expect(await authenticateToken(token)).toMatchObject({
      ok: true,
      principal: { mcpReadOnly: true, budget: { writes: 5 } },
    });
    expect(await existingKey(caller.keyId)).toMatchObject({ mcp: 'read-only', webhook_url: null, exclude_own: true });
  });
});
