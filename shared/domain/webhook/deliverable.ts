import { abilityFor } from '#domain/event/event.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';

/**
 * What the signer's use cases (shared/app/webhook-delivery.ts) know of a webhook POST and its
 * target; the POST itself (functions/webhooks/post.ts, send.ts) stays with the signer's handler.
 */

/** What one attempt came to: an HTTP status, or an error that prevented one. */
export interface PostResult {
  status: number | null;
  error: string | null;
  /** Seconds, from Retry-After on 429 and 503 only. */
  retryAfterSeconds: number | undefined;
  ms: number;
}

const READS = ['orders:read', 'catalog:read', 'content:read'] as const;

export type DeliverableKey = KeyRecord & { webhook_url: string };

/** Why a key can receive no delivery (of an event of `eventType`; without it, of any event) (null: it can). */
export function whyNotDeliverable(key: KeyRecord | undefined, eventType?: string): string | null {
  if (!key) return 'key no longer exists';
  if (key.status !== 'active') return 'key is revoked';
  // The read ability of the event's family (it may have been taken away since the fan-out).
  const needed = eventType === undefined ? undefined : abilityFor(eventType);
  if (needed !== undefined && !key.abilities.includes(needed)) return `key does not hold ${needed}`;
  if (needed === undefined && !READS.some((a) => key.abilities.includes(a))) return 'key holds no read ability';
  if (!key.webhook_url) return 'key has no webhook URL';
  return null;
}

export const isSuccess = (r: PostResult) => r.status !== null && r.status >= 200 && r.status < 300;

export const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
};
