import type { KeyRecord } from '#domain/key/api-key.ts';
import { config } from '#shared/config.ts';
import { DomainError } from '#domain/errors.ts';
import { newEventId } from '#domain/order/events.ts';
import { eventBody, signingSecrets } from '#domain/webhook/delivery.ts';
import { signedHeaders } from '#domain/webhook/signature.ts';
import { decryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import { postWebhook } from './post.ts';

export const WEBHOOK_PING = 'webhook.ping';

/**
 * A test delivery (`webhooks ping --id KEY_ID`): a `webhook.ping` event in the envelope of every
 * event, signed with the key's secrets, POSTed at once to its URL by the same sender as real
 * deliveries (the same URL check, pinned DNS lookup and 10 s timeout), and never retried or logged:
 * an integrator checks the endpoint and their verification code before a real event arrives.
 * A receiver's non-2xx is an answer, not an error of the command: it is shown with `delivered: false`.
 * Signing needs the plaintext secrets, so the admin function may decrypt them for a ping: the one
 * place besides the signer (it issues the secrets in the first place).
 */
export async function pingWebhook(key: KeyRecord, now = new Date()) {
  if (key.status !== 'active') throw new DomainError('invalid_transition', `key ${key.id} is revoked`, 'id');
  if (!key.webhook_url)
    throw new DomainError(
      'validation_failed',
      `key ${key.id} has no webhook URL (set one with keys set-webhook)`,
      'id',
    );
  const eventId = newEventId();
  const timestamp = now.toISOString();
  const body = eventBody({
    type: WEBHOOK_PING,
    timestamp,
    data: { key_id: key.id, store_id: key.store_id, events: key.events },
  });
  const secrets = await Promise.all(signingSecrets(key, now).map(decryptWebhookSecret));
  const headers = signedHeaders(secrets, eventId, Math.floor(now.getTime() / 1000), body);
  const result = await postWebhook(key.webhook_url, { ...headers }, body, {
    allowLoopback: config().allowPrivateWebhooks,
  });
  return {
    event_id: eventId,
    type: WEBHOOK_PING,
    url: key.webhook_url,
    status: result.status,
    ms: result.ms,
    delivered: result.status !== null && result.status >= 200 && result.status < 300,
    error: result.error,
  };
}
