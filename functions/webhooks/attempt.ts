import { getKey, type KeyRecord } from '../../shared/db/key.repo.ts';
import { getDelivery, updateDelivery } from '../../shared/db/delivery.repo.ts';
import { config } from '../../shared/config.ts';
import { parseDeliveryMessage, signingSecrets, type Delivery } from '../../shared/domain/webhook/delivery.ts';
import { afterFailure, DUE_TOLERANCE_MS, maxReceiveCount, visibilityFor } from '../../shared/domain/webhook/retry.ts';
import { signedHeaders } from '../../shared/domain/webhook/signature.ts';
import { setVisibility } from '../../shared/queue/sqs.ts';
import { log } from '../../shared/log.ts';
import { postWebhook } from './post.ts';

export interface ReceivedMessage {
  messageId: string;
  receiptHandle: string;
  body: string;
  /** ApproximateReceiveCount: this receive included. */
  receiveCount: number;
}

/** `done`: delete the message. `keep`: leave it (a batch item failure); its visibility is set. */
export type MessageOutcome = 'done' | 'keep';

function whyNotDeliverable(key: KeyRecord | undefined): string | null {
  if (!key) return 'key no longer exists';
  if (key.status !== 'active') return 'key is revoked';
  if (!key.abilities.includes('orders:read')) return 'key does not hold orders:read';
  if (!key.webhook_url) return 'key has no webhook URL';
  return null;
}

const host = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return 'invalid';
  }
};

/**
 * One queue message: attempt its delivery if due, then record the outcome and schedule the next
 * attempt (per-message visibility) or give up. The delivery log, not the message, holds the
 * state, so any copy of a message (SQS delivers at least once) finds the truth there: delivered
 * and superseded rounds are dropped, `failed` ones are sent on to the dead-letter queue.
 */
export async function processMessage(m: ReceivedMessage): Promise<MessageOutcome> {
  let message;
  try {
    message = parseDeliveryMessage(m.body);
  } catch {
    log('error', 'webhook queue message is not a delivery; dead-lettering it', { message_id: m.messageId });
    await setVisibility(m.receiptHandle, 0);
    return 'keep';
  }
  const { event_id: eventId, key_id: keyId, round } = message;
  const [key, delivery] = await Promise.all([getKey(keyId), getDelivery(keyId, eventId)]);
  if (!delivery || delivery.round !== round || delivery.state === 'delivered') return 'done';
  if (delivery.state === 'failed') {
    // Given up on: back at once, so that the receive limit moves it to the dead-letter queue.
    await setVisibility(m.receiptHandle, 0);
    return 'keep';
  }

  const nowMs = Date.now();
  const dueInMs = delivery.next_attempt_at === null ? 0 : Date.parse(delivery.next_attempt_at) - nowMs;
  if (dueInMs > DUE_TOLERANCE_MS) {
    // Back early from a chained wait (or a duplicate copy): sleep again, no attempt.
    await setVisibility(m.receiptHandle, visibilityFor(dueInMs / 1000));
    return 'keep';
  }

  const refusal = whyNotDeliverable(key);
  if (refusal !== null || !key?.webhook_url) {
    await updateDelivery(keyId, eventId, round, { state: 'failed', attempted: false, last_error: refusal, next_attempt_at: null, now: new Date().toISOString() });
    log('warn', 'webhook not deliverable', { event_id: eventId, key_id: keyId, reason: refusal });
    return 'done';
  }
  return attempt(m, key as KeyRecord & { webhook_url: string }, delivery, nowMs);
}

async function attempt(m: ReceivedMessage, key: KeyRecord & { webhook_url: string }, delivery: Delivery, nowMs: number): Promise<MessageOutcome> {
  const cfg = config();
  const { event_id: eventId, key_id: keyId, round } = delivery;
  // A fresh timestamp on every attempt: receivers reject old ones (replay protection).
  const timestamp = Math.floor(nowMs / 1000);
  const headers = signedHeaders(signingSecrets(key, new Date(nowMs)), eventId, timestamp, delivery.body);
  const result = await postWebhook(key.webhook_url, { ...headers }, delivery.body, { allowLoopback: cfg.allowPrivateWebhooks });
  const now = new Date().toISOString();
  const attemptNo = delivery.round_attempts + 1;
  const logFields = { event_id: eventId, key_id: keyId, host: host(key.webhook_url), attempt: attemptNo, status: result.status, ms: result.ms };

  if (result.status !== null && result.status >= 200 && result.status < 300) {
    await updateDelivery(keyId, eventId, round, { state: 'delivered', attempted: true, last_status_code: result.status, last_error: null, next_attempt_at: null, now });
    log('info', 'webhook delivered', logFields);
    return 'done';
  }

  const decision = afterFailure({
    schedule: cfg.webhookRetrySchedule,
    attemptsInRound: attemptNo,
    receiveCount: m.receiveCount,
    maxReceiveCount: maxReceiveCount(cfg.webhookRetrySchedule),
    retryAfterSeconds: result.retryAfterSeconds,
  });
  if (!decision.retry) {
    const updated = await updateDelivery(keyId, eventId, round, {
      state: 'failed',
      attempted: true,
      last_status_code: result.status,
      last_error: `${result.error}; ${decision.reason}`,
      next_attempt_at: null,
      now,
    });
    log('warn', 'webhook failed for good', { ...logFields, error: result.error });
    if (!updated) return 'done';
    await setVisibility(m.receiptHandle, 0);
    return 'keep';
  }
  const nextAt = new Date(Date.now() + decision.delaySeconds * 1000).toISOString();
  const updated = await updateDelivery(keyId, eventId, round, {
    state: 'pending',
    attempted: true,
    last_status_code: result.status,
    last_error: result.error,
    next_attempt_at: nextAt,
    now,
  });
  log('info', 'webhook attempt failed; retrying', { ...logFields, error: result.error, retry_in_s: decision.delaySeconds });
  if (!updated) return 'done';
  await setVisibility(m.receiptHandle, visibilityFor(decision.delaySeconds));
  return 'keep';
}
