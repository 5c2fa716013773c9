import type { RequestContext } from '#shared/context.ts';
import { createKey, ensureExternalId, listKeysOfStore } from '#db/key/repo.ts';
import { lastSequence } from '#db/event/log.repo.ts';
import { createStore, listStores, type Store } from '#db/store/repo.ts';
import type { Ability } from '#domain/key/abilities.ts';
import { generateToken, generateWebhookSecret, hashToken, type KeyRecord, type McpMode } from '#domain/key/api-key.ts';
import { generateExternalId, isOrdered, type AwsDestination } from '#domain/key/destination.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import { requireStore } from './stores.ts';
import { activeKey, changeKeySettings, changeWebhook, existingKey, revokeKey, rotateToken } from './key-changes.ts';

export { activeKey, changeKeySettings, existingKey };

/**
 * The admin's store and key commands (functions/admin/commands.ts validates their arguments and
 * shapes their answers). A webhook secret is sealed by the caller's `seal` (KMS lives in
 * shared/secrets, which no use case imports) before it is stored; the admin sees it once, in the clear.
 * What the admin can get wrong (a store or key that is not there, a revoked key, an id taken) is
 * answered as a refusal (shared/domain/outcome.ts), which functions/admin/handler.ts presents.
 */

/** Seals a webhook secret before it is stored (the handler passes shared/secrets' encryptWebhookSecret). */
export type SealSecret = (secret: string) => Promise<string>;

export async function openStore(
  ctx: RequestContext,
  input: { id: string; name: string; currency: string },
): Promise<Store | Refused> {
  const created = await createStore(ctx, {
    id: input.id,
    name: input.name,
    currency_code: input.currency,
    created_at: new Date().toISOString(),
  });
  return created.kind === 'created' ? created.store : refused('conflict', `store "${input.id}" already exists`, 'id');
}

export const allStores = (ctx: RequestContext): Promise<Store[]> => listStores(ctx);

/** A new key of an existing store: its record, with its token and webhook secret in the clear. */
export async function issueKey(
  ctx: RequestContext,
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
): Promise<{ record: KeyRecord; token: string; webhookSecret: string } | Refused> {
  const { store: storeId, ...settings } = input;
  const store = await requireStore(ctx, storeId);
  if (isRefused(store)) return store;
  const token = generateToken();
  const webhookSecret = generateWebhookSecret();
  const record = await createKey(ctx, {
    ...settings,
    storeId: store.id,
    currency: store.currency_code,
    tokenHash: hashToken(token),
    webhookSecret: await seal(webhookSecret),
    awsExternalId: generateExternalId(),
    now: new Date().toISOString(),
  });
  return { record, token, webhookSecret };
}

/** The keys of an existing store (404 naming `store` otherwise). */
export async function keysOfStore(ctx: RequestContext, storeId: string): Promise<KeyRecord[] | Refused> {
  const store = await requireStore(ctx, storeId);
  return isRefused(store) ? store : listKeysOfStore(ctx, storeId);
}

export const revokeKeyNow = (ctx: RequestContext, keyId: number): Promise<KeyRecord | Refused> =>
  revokeKey(ctx, keyId, new Date().toISOString());

/** A new token for a key; the old one stops working. An OAuth grant is refused: its tokens expire, a rotated one would not. */
export async function rotateKey(
  ctx: RequestContext,
  keyId: number,
): Promise<{ record: KeyRecord; token: string } | Refused> {
  const key = await existingKey(ctx, keyId);
  if (isRefused(key)) return key;
  if (key.kind === 'grant')
    return refused('invalid_transition', `key ${keyId} is an OAuth grant; revoke it instead`, 'id');
  const store = await requireStore(ctx, key.store_id);
  if (isRefused(store)) return store;
  const token = generateToken();
  const record = await rotateToken(ctx, keyId, hashToken(token), store.currency_code);
  return isRefused(record) ? record : { record, token };
}

/**
 * Changes an existing key's webhook URL, events and/or exclude-own (404 naming `id` otherwise). A
 * key has one destination: a URL replaces an SQS queue or EventBridge bus, and `null` removes
 * whichever it has.
 */
export async function changeKeyWebhook(
  ctx: RequestContext,
  keyId: number,
  changes: { webhook_url?: string | null; events?: string[]; exclude_own?: boolean },
): Promise<KeyRecord | Refused> {
  const key = await existingKey(ctx, keyId);
  if (isRefused(key)) return key;
  const { webhook_url: url, ...rest } = changes;
  const destination =
    url === undefined
      ? {}
      : { destination: { to: url === null ? null : { kind: 'webhook' as const, url }, orderedFrom: null } };
  return changeWebhook(ctx, keyId, { ...rest, ...destination });
}

/**
 * Points an existing, active key's events at an SQS queue or an EventBridge bus in the integrator's
 * account (docs/destinations.md), replacing its webhook URL if it had one. The key gets its external
 * id now if it was made before destinations existed. A FIFO queue's order starts after the store's
 * last event: events numbered before keep the order they were sent in (shared/app/ordered-delivery.ts).
 */
export async function changeKeyDestination(
  ctx: RequestContext,
  keyId: number,
  to: AwsDestination,
): Promise<KeyRecord | Refused> {
  const key = await activeKey(ctx, keyId);
  if (isRefused(key)) return key;
  const externalId = key.aws_external_id ?? (await ensureExternalId(ctx, keyId, generateExternalId()));
  if (typeof externalId !== 'string') return externalId;
  const orderedFrom = isOrdered(to) ? await lastSequence(ctx, key.store_id) : null;
  return changeWebhook(ctx, keyId, { destination: { to, orderedFrom } });
}

/** The external id an existing key's destination role must name (made now for a key made before destinations). */
export async function keyExternalId(
  ctx: RequestContext,
  keyId: number,
): Promise<{ key_id: number; aws_external_id: string } | Refused> {
  const key = await existingKey(ctx, keyId);
  if (isRefused(key)) return key;
  const externalId = key.aws_external_id ?? (await ensureExternalId(ctx, keyId, generateExternalId()));
  return typeof externalId === 'string' ? { key_id: keyId, aws_external_id: externalId } : externalId;
}
