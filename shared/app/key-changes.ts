import type { RequestContext } from '#shared/context.ts';
import { revokeKey as revokeOnce, updateKeySettings, type KeySettings } from '#db/key/change.repo.ts';
import {
  getKey,
  type KeyMissing,
  type KeyRevoked,
  rotateKeyToken,
  updateKeyWebhook,
  withLastUsed,
  type WebhookUpdate,
} from '#db/key/repo.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import { retryLost } from './contention.ts';

/**
 * Changes of a key that race the key's own requests and the admin's other changes: each attempt
 * reads the key and writes guarded on what it read (shared/db/key), and an attempt that lost to a
 * rotation, a request or another change is made again from a fresh read (./contention.ts). A key
 * that is not there, or revoked, is the caller's refusal, naming the `id` argument.
 */

/** An existing key's record, or 404 naming `id`. */
export const existingKey = async (ctx: RequestContext, keyId: number): Promise<KeyRecord | Refused> =>
  (await getKey(ctx, keyId)) ?? missing(keyId);

const missing = (keyId: number) => refused('not_found', `key ${keyId} does not exist`, 'id');
const revoked = (keyId: number) => refused('invalid_transition', `key ${keyId} is revoked`, 'id');

/** An existing key that is not revoked, or 404 / 409 naming `id`: the same refusals as a change's. */
export async function activeKey(ctx: RequestContext, keyId: number): Promise<KeyRecord | Refused> {
  const key = await existingKey(ctx, keyId);
  return isRefused(key) || key.status === 'active' ? key : revoked(keyId);
}

/**
 * What a change answered when it found no active key to change, or kept losing to other changes
 * of the key (the 429 `resource_busy`, passed on): the refusal the admin sees.
 */
const refusal = (keyId: number, outcome: KeyMissing | KeyRevoked | Refused): Refused => {
  if (outcome.kind === 'refused') return outcome;
  return outcome.kind === 'missing' ? missing(keyId) : revoked(keyId);
};

/** Revokes a key for good (its token stops working at once); a revoked key is answered as it is. */
export async function revokeKey(ctx: RequestContext, keyId: number, now: string): Promise<KeyRecord | Refused> {
  const outcome = await retryLost(ctx, `key ${keyId}`, 5, () => revokeOnce(ctx, keyId, now));
  return outcome.kind === 'changed' ? withLastUsed(ctx, outcome.key) : refusal(keyId, outcome);
}

/** The settings a request's handling reads (MCP mode, write budget), on the key and its token item. */
export async function changeKeySettings(
  ctx: RequestContext,
  keyId: number,
  changes: KeySettings,
): Promise<KeyRecord | Refused> {
  const outcome = await retryLost(ctx, `key ${keyId}`, 5, () => updateKeySettings(ctx, keyId, changes));
  return outcome.kind === 'changed' ? outcome.key : refusal(keyId, outcome);
}

/**
 * A new token for the same key id (its external ids stay); the old token stops working at once.
 * A request of the key between the read and the write makes the attempt lost, so the rate-limit
 * counts carried over to the new token are complete.
 */
export async function rotateToken(
  ctx: RequestContext,
  keyId: number,
  newTokenHash: string,
  currency: string | null,
): Promise<KeyRecord | Refused> {
  const outcome = await retryLost(ctx, `key ${keyId}`, 10, () => rotateKeyToken(ctx, keyId, newTokenHash, currency));
  return outcome.kind === 'rotated' ? outcome.key : refusal(keyId, outcome);
}

/**
 * Webhook settings of an active key (shared/db/key/repo.ts `updateKeyWebhook`). A secret rotation
 * (`expectedSecret`) that finds another rotation came first is a 409: run the command again.
 */
export async function changeWebhook(
  ctx: RequestContext,
  keyId: number,
  changes: Parameters<typeof updateKeyWebhook>[2],
  expectedSecret?: string,
): Promise<KeyRecord | Refused> {
  const outcome: WebhookUpdate = await updateKeyWebhook(ctx, keyId, changes, expectedSecret);
  if (outcome.kind === 'updated') return outcome.key;
  if (outcome.kind !== 'secret_moved') return refusal(keyId, outcome);
  return refused(
    'conflict',
    `the webhook secret of key ${keyId} was rotated concurrently; run the command again`,
    'id',
  );
}
