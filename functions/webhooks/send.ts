import { config } from '#shared/config.ts';
import { signingSecrets, type Delivery } from '#domain/webhook/delivery.ts';
import { signedHeaders } from '#domain/webhook/signature.ts';
import { decryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import { postWebhook } from './post.ts';
import { tracePost } from './tracing.ts';
import { hostOf, type DeliverableKey, type PostResult } from '#domain/webhook/deliverable.ts';

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
