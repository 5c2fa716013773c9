import type { RequestContext } from '#shared/context.ts';
import { revokeKey as revokeOnce, updateKeySettings, type KeySettings } from '#db/key/change.repo.ts';
import { rotateKeyToken, withLastUsed } from '#db/key/repo.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';
import { retryLost } from './contention.ts';

/**
 * Changes of a key that race the key's own requests and the admin's other changes: each attempt
 * reads the key and writes guarded on what it read (shared/db/key), and an attempt that lost to a
 * rotation, a request or another change is made again from a fresh read (./contention.ts).
 */

/** Revokes a key for good (its token stops working at once); a revoked key is answered as it is. */
export async function revokeKey(ctx: RequestContext, keyId: number, now: string): Promise<KeyRecord> {
  const { key } = await retryLost(ctx, `key ${keyId}`, 5, () => revokeOnce(ctx, keyId, now));
  return withLastUsed(ctx, key);
}

/** The settings a request's handling reads (MCP mode, write budget), on the key and its token item. */
export async function changeKeySettings(ctx: RequestContext, keyId: number, changes: KeySettings): Promise<KeyRecord> {
  return (await retryLost(ctx, `key ${keyId}`, 5, () => updateKeySettings(ctx, keyId, changes))).key;
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
): Promise<KeyRecord> {
  return (await retryLost(ctx, `key ${keyId}`, 10, () => rotateKeyToken(ctx, keyId, newTokenHash, currency))).key;
}
