import type { KeyRecord } from '#domain/key/api-key.ts';
import { config } from '#shared/config.ts';
import { refused, type Refused } from '#domain/outcome.ts';
import { newEventId } from '#domain/order/events.ts';
import { destinationView, type AwsDestination } from '#domain/key/destination.ts';
import { eventBody, signingSecrets } from '#domain/webhook/delivery.ts';
import { signedHeaders } from '#domain/webhook/signature.ts';
import { isSuccess } from '#domain/webhook/deliverable.ts';
import { decryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import { postWebhook } from './post.ts';
import { putOnBus } from './destinations/eventbridge.ts';
import { sendToQueue } from './destinations/sqs.ts';

const WEBHOOK_PING = 'webhook.ping';

/** What `webhooks ping` prints: the destination's answer (an HTTP status, AWS's for a queue or bus) and the time it took. */
export interface PingResult {
  event_id: string;
  type: string;
  /** The webhook's URL; null for a queue or bus, which `destination` names. */
  url: string | null;
  destination?: ReturnType<typeof destinationView>;
  status: number | null;
  ms: number;
  delivered: boolean;
  error: string | null;
}

/**
 * A test delivery (`webhooks ping --id KEY_ID`, of an active key): a `webhook.ping` event in the envelope of every
 * event, sent at once to the key's destination by the same sender as real deliveries (the same URL
 * check, pinned DNS lookup and 10 s timeout for a webhook; the same role, external id and message
 * shape for a queue or bus), and never retried or logged: an integrator checks the endpoint and
 * their verification code (or their role's trust) before a real event arrives. A non-2xx, or AWS's
 * refusal, is an answer, not an error of the command: it is shown with `delivered: false`.
 *
 * A webhook is signed with the key's secrets, so the admin function may decrypt them for a ping: the
 * one place besides the signer (it issues the secrets in the first place). A queue or bus is reached
 * only by the signer's role, the one the integrator's role trusts: in AWS the admin asks the signer
 * (SIGNER_FUNCTION_NAME, a synchronous invoke of `{"ping": {"key_id": N}}`, functions/webhooks/
 * handler.ts); where none is set (the local stack, in this process) it sends itself.
 */
export async function pingWebhook(key: KeyRecord, now = new Date()): Promise<PingResult | Refused> {
  const destination = key.destination;
  if (!destination)
    return refused(
      'validation_failed',
      `key ${key.id} has no webhook URL or destination (set one with keys set-webhook or keys set-destination)`,
      'id',
    );
  if (destination.kind !== 'webhook') {
    const signer = config().signerFunctionName;
    return signer ? askSigner(signer, key.id) : pingDestination(key, destination, now);
  }
  const { eventId, body } = pingEvent(key, now);
  const secrets = await Promise.all(signingSecrets(key, now).map(decryptWebhookSecret));
  const headers = signedHeaders(secrets, eventId, Math.floor(now.getTime() / 1000), body);
  const result = await postWebhook(destination.url, { ...headers }, body, {
    allowLoopback: config().allowPrivateWebhooks,
  });
  return {
    event_id: eventId,
    type: WEBHOOK_PING,
    url: destination.url,
    status: result.status,
    ms: result.ms,
    delivered: isSuccess(result),
    error: result.error,
  };
}

function pingEvent(key: KeyRecord, now: Date) {
  const eventId = newEventId();
  const body = eventBody({
    type: WEBHOOK_PING,
    timestamp: now.toISOString(),
    data: { key_id: key.id, store_id: key.store_id, events: key.events },
  });
  return { eventId, body };
}

/** The ping of a queue or bus, sent by this process under the integrator's role (the signer's, in AWS). */
export async function pingDestination(
  key: KeyRecord,
  destination: AwsDestination,
  now = new Date(),
): Promise<PingResult> {
  const { eventId, body } = pingEvent(key, now);
  const base = { event_id: eventId, type: WEBHOOK_PING, url: null, destination: destinationView(destination) };
  if (!key.aws_external_id)
    return { ...base, status: null, ms: 0, delivered: false, error: 'key has no external id (keys external-id)' };
  const send = {
    keyId: key.id,
    externalId: key.aws_external_id,
    destination,
    delivery: { event_id: eventId, event_type: WEBHOOK_PING, store_id: key.store_id, round: 0, body },
  };
  const result = await (destination.kind === 'sqs' ? sendToQueue(send) : putOnBus(send));
  return {
    ...base,
    status: result.status,
    ms: result.ms,
    delivered: isSuccess(result),
    error: result.error,
  };
}

/** `{"ping": {"key_id": N}}` to the signer function, answered with its PingResult. */
async function askSigner(functionName: string, keyId: number): Promise<PingResult> {
  const { LambdaClient, InvokeCommand } = await import('@aws-sdk/client-lambda');
  const client = new LambdaClient({ region: config().region });
  try {
    const out = await client.send(
      new InvokeCommand({
        FunctionName: functionName,
        Payload: Buffer.from(JSON.stringify({ ping: { key_id: keyId } })),
      }),
    );
    const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
    if (out.FunctionError) throw new Error(`the signer could not ping: ${text}`);
    return JSON.parse(text) as PingResult;
  } finally {
    client.destroy();
  }
}
