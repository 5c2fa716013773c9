import type { KeyRecord } from '#domain/key/api-key.ts';
import { config } from '#shared/config.ts';
import { signingSecrets, type Delivery } from '#domain/webhook/delivery.ts';
import { signedHeaders } from '#domain/webhook/signature.ts';
import { decryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import { postWebhook, type PostResult } from './post.ts';
import { tracePost } from './tracing.ts';
import { abilityFor } from '#domain/event/event.ts';

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

/**
 * One signed POST of a delivery's body. A fresh timestamp on every attempt (receivers reject old
 * ones); the secret is opened only here, and a failure to open it is a platform error (it throws).
 * The POST is a span of its own in X-Ray (tracing.ts).
 */
export async function sendAttempt(key: DeliverableKey, delivery: Delivery, nowMs = Date.now()): Promise<PostResult> {
  const cfg = config();
  const secrets = await Promise.all(signingSecrets(key, new Date(nowMs)).map(decryptWebhookSecret));
  const headers = signedHeaders(secrets, delivery.event_id, Math.floor(nowMs / 1000), delivery.body);
  const sequence = sequenceInBody(delivery.body);
  const span = { host: hostOf(key.webhook_url), eventType: delivery.event_type, attempt: delivery.round_attempts + 1 };
  return tracePost(span, () =>
    postWebhook(
      key.webhook_url,
      { ...headers, ...(sequence === undefined ? {} : { 'webhook-sequence': String(sequence) }) },
      delivery.body,
      { allowLoopback: cfg.allowPrivateWebhooks, timeoutMs: cfg.webhookResponseTimeoutMs },
    ),
  );
}

/** The event's number in its store's log, which the body carries (deliveries made before numbering have none). */
function sequenceInBody(body: string): number | undefined {
  try {
    const parsed = JSON.parse(body) as { sequence?: unknown };
    return typeof parsed.sequence === 'number' ? parsed.sequence : undefined;
  } catch {
    return undefined;
  }
}

export const isSuccess = (r: PostResult) => r.status !== null && r.status >= 200 && r.status < 300;

export const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
};
