import { config } from '#shared/config.ts';
import { signingSecrets, type Delivery } from '#domain/webhook/delivery.ts';
import { signedHeaders } from '#domain/webhook/signature.ts';
import { sequenceInBody } from '#domain/webhook/destination.ts';
import { targetName } from '#domain/key/destination.ts';
import { decryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import { postWebhook } from './post.ts';
import { tracePost } from './tracing.ts';
import { putOnBus } from './destinations/eventbridge.ts';
import { sendToQueue } from './destinations/sqs.ts';
import type { DeliverableKey, PostResult } from '#domain/webhook/deliverable.ts';

/**
 * One attempt of a delivery to the key's destination, a span of its own in X-Ray (tracing.ts): a
 * signed POST to a webhook URL, or a send to an SQS queue or an EventBridge bus under the
 * integrator's role (destinations/). The body is the delivery's, byte for byte, whichever.
 */
export async function sendAttempt(key: DeliverableKey, delivery: Delivery, nowMs = Date.now()): Promise<PostResult> {
  const destination = key.destination;
  const span = {
    host: targetName(destination),
    eventType: delivery.event_type,
    attempt: delivery.round_attempts + 1,
  };
  if (destination.kind === 'webhook') return tracePost(span, () => postSigned(key, destination.url, delivery, nowMs));
  if (!key.aws_external_id)
    return { status: null, error: 'key has no external id (keys external-id)', retryAfterSeconds: undefined, ms: 0 };
  const send = { keyId: key.id, externalId: key.aws_external_id, destination, delivery };
  return tracePost(span, () => (destination.kind === 'sqs' ? sendToQueue(send) : putOnBus(send)));
}

/**
 * The signed POST. A fresh timestamp on every attempt (receivers reject old ones); the secret is
 * opened only here, and a failure to open it is a platform error (it throws).
 */
async function postSigned(key: DeliverableKey, url: string, delivery: Delivery, nowMs: number): Promise<PostResult> {
  const cfg = config();
  const secrets = await Promise.all(signingSecrets(key, new Date(nowMs)).map(decryptWebhookSecret));
  const headers = signedHeaders(secrets, delivery.event_id, Math.floor(nowMs / 1000), delivery.body);
  const sequence = sequenceInBody(delivery.body);
  return postWebhook(
    url,
    { ...headers, ...(sequence === undefined ? {} : { 'webhook-sequence': String(sequence) }) },
    delivery.body,
    { allowLoopback: cfg.allowPrivateWebhooks, timeoutMs: cfg.webhookResponseTimeoutMs },
  );
}
