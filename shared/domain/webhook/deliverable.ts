import { abilityFor } from '#domain/event/event.ts';
import type { KeyRecord } from '#domain/key/api-key.ts';
import type { Destination } from '#domain/key/destination.ts';

/**
 * What the signer's use cases (shared/app/webhook-delivery.ts) know of an attempt and its target;
 * the sending itself (the POST of functions/webhooks/post.ts, the SQS and EventBridge sends of
 * functions/webhooks/destinations/) stays with the signer's handler.
 */

/**
 * What one attempt came to: an HTTP status (a webhook receiver's, or the AWS API's for an SQS or
 * EventBridge destination), or an error that prevented one.
 */
export interface PostResult {
  status: number | null;
  error: string | null;
  /** Seconds, from Retry-After on 429 and 503 only. */
  retryAfterSeconds: number | undefined;
  ms: number;
}

const READS = ['orders:read', 'catalog:read', 'content:read'] as const;

export type DeliverableKey = KeyRecord & { destination: Destination };

/** Why a key can receive no delivery (of an event of `eventType`; without it, of any event) (null: it can). */
export function whyNotDeliverable(key: KeyRecord | undefined, eventType?: string): string | null {
  if (!key) return 'key no longer exists';
  if (key.status !== 'active') return 'key is revoked';
  // The read ability of the event's family (it may have been taken away since the fan-out).
  const needed = eventType === undefined ? undefined : abilityFor(eventType);
  if (needed !== undefined && !key.abilities.includes(needed)) return `key does not hold ${needed}`;
  if (needed === undefined && !READS.some((a) => key.abilities.includes(a))) return 'key holds no read ability';
  if (!key.destination) return 'key has no webhook URL or destination';
  return null;
}

export const isSuccess = (r: PostResult) => r.status !== null && r.status >= 200 && r.status < 300;
