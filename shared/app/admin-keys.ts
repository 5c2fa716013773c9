import type { KeySettings } from '#db/key/change.repo.ts';
import { createKey, listKeysOfStore, requireKey, updateKeyWebhook } from '#db/key/repo.ts';
import { createStore, listStores, type Store } from '#db/store/repo.ts';
import type { Ability } from '#domain/key/abilities.ts';
import { generateToken, generateWebhookSecret, hashToken, type KeyRecord, type McpMode } from '#domain/key/api-key.ts';
import { DomainError } from '#domain/errors.ts';
import { requireStore } from './stores.ts';
import { changeKeySettings as changeSettings, revokeKey, rotateToken } from './key-changes.ts';

/**
 * The admin's store and key commands (functions/admin/commands.ts validates their arguments and
 * shapes their answers). A webhook secret is sealed by the caller's `seal` (KMS lives in
 * shared/secrets, which no use case imports) before it is stored; the admin sees it once, in the clear.
 */
export type SealSecret = (secret: string) => Promise<string>;

export async function openStore(input: { id: string; name: string; currency: string }): Promise<Store> {
  return createStore({
    id: input.id,
    name: input.name,
    currency_code: input.currency,
    created_at: new Date().toISOString(),
  });
}

export const allStores = (): Promise<Store[]> => listStores();

/** A new key of an existing store: its record, with its token and webhook secret in the clear. */
export async function issueKey(
  input: {
    store: string;
    name: string;
    abilities: Ability[];
    webhookUrl: string | null;
    events: string[];
    excludeOwn: boolean;
    mcp: McpMode;
    writesPerHour: number | null;
    statusChangesPerHour: number | null;
  },
  seal: SealSecret,
): Promise<{ record: KeyRecord; token: string; webhookSecret: string }> {
  const { store: storeId, ...settings } = input;
  const store = await requireStore(storeId);
  const token = generateToken();
  const webhookSecret = generateWebhookSecret();
  const record = await createKey({
    ...settings,
    storeId: store.id,
    currency: store.currency_code,
    tokenHash: hashToken(token),
    webhookSecret: await seal(webhookSecret),
    now: new Date().toISOString(),
  });
  return { record, token, webhookSecret };
}

/** The keys of an existing store (404 naming `store` otherwise). */
export async function keysOfStore(storeId: string): Promise<KeyRecord[]> {
  await requireStore(storeId);
  return listKeysOfStore(storeId);
}

export const revokeKeyNow = (keyId: number): Promise<KeyRecord> => revokeKey(keyId, new Date().toISOString());

/** A new token for a key; the old one stops working. An OAuth grant is refused: its tokens expire, a rotated one would not. */
export async function rotateKey(keyId: number): Promise<{ record: KeyRecord; token: string }> {
  const key = await requireKey(keyId);
  if (key.kind === 'grant')
    throw new DomainError('invalid_transition', `key ${keyId} is an OAuth grant; revoke it instead`, 'id');
  const store = await requireStore(key.store_id);
  const token = generateToken();
  return { record: await rotateToken(keyId, hashToken(token), store.currency_code), token };
}

/** Changes an existing key's webhook URL, events and/or exclude-own (404 naming `id` otherwise). */
export async function changeKeyWebhook(
  keyId: number,
  changes: { webhook_url?: string | null; events?: string[]; exclude_own?: boolean },
): Promise<KeyRecord> {
  await requireKey(keyId);
  return updateKeyWebhook(keyId, changes);
}

export const changeKeySettings = (keyId: number, changes: KeySettings): Promise<KeyRecord> =>
  changeSettings(keyId, changes);

/** An existing key's record, or 404 naming `id`. */
export const existingKey = (keyId: number): Promise<KeyRecord> => requireKey(keyId);
