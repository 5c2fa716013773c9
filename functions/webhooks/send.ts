import type { KeyRecord } from '../../shared/db/key.repo.ts';
import { config } from '../../shared/config.ts';
import { signingSecrets, type Delivery } from '../../shared/domain/webhook/delivery.ts';
import { signedHeaders } from '../../shared/domain/webhook/signature.ts';
import { decryptWebhookSecret } from '../../shared/secrets/webhook-secret-cipher.ts';
import { postWebhook, type PostResult } from './post.ts';

export type DeliverableKey = KeyRecord & { webhook_url: string };

/** Why a key can receive no delivery (null: it can). */
export function whyNotDeliverable(key: KeyRecord | undefined): string | null {
  if (!key) return 'key no longer exists';
  if (key.status !== 'active') return 'key is revoked';
  if (!key.abilities.includes('orders:read')) return 'key does not hold orders:read';
  if (!key.webhook_url) return 'key has no webhook URL';
  return null;
}

/**
 * One signed POST of a delivery's body. A fresh timestamp on every attempt (receivers reject old
 * ones); the secret is opened only here, and a failure to open it is a platform error (it throws).
 */
export async function sendAttempt(key: DeliverableKey, delivery: Delivery, nowMs = Date.now()): Promise<PostResult> {
  const cfg = config();
  const secrets = await Promise.all(signingSecrets(key, new Date(nowMs)).map(decryptWebhookSecret));
  const headers = signedHeaders(secrets, delivery.event_id, Math.floor(nowMs / 1000), delivery.body);
  return postWebhook(key.webhook_url, { ...headers }, delivery.body, { allowLoopback: cfg.allowPrivateWebhooks, timeoutMs: cfg.webhookResponseTimeoutMs });
}

export const isSuccess = (r: PostResult) => r.status !== null && r.status >= 200 && r.status < 300;

export const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
};
