import type { AwsDestination } from '#domain/key/destination.ts';
import { regionOf } from '#domain/key/destination.ts';
import type { PostResult } from '#domain/webhook/deliverable.ts';
import {
  EVENTBRIDGE_MAX_ENTRY_BYTES,
  EVENTBRIDGE_SOURCE,
  eventBridgeEntrySize,
  thinBody,
} from '#domain/webhook/destination.ts';
import type { DestinationSend } from './send-input.ts';
import { refusedAttempt } from './aws-error.ts';
import { roleCredentials } from './credentials.ts';
import { eventBridgeClientFor } from './clients.ts';

/**
 * One event onto the integrator's bus, as the role assumed with the key's external id: `Source`
 * `store-integration-api`, `DetailType` the event type, `Detail` the body the webhook would POST (a
 * thin event when the entry passes EventBridge's 256 KiB), `Time` the change's timestamp. PutEvents
 * answers 200 with the entry's own error when it fails, so the entry is what decides.
 */
export async function putOnBus(send: DestinationSend): Promise<PostResult> {
  const { keyId, externalId, delivery } = send;
  const destination = send.destination as Extract<AwsDestination, { kind: 'eventbridge' }>;
  const started = Date.now();
  try {
    await roleCredentials(destination.role_arn, externalId, keyId);
  } catch (err) {
    return refusedAttempt(`assume role ${destination.role_arn}`, err, started);
  }
  const timestamp = timestampOf(delivery.body);
  const entry = {
    EventBusName: destination.bus_arn,
    Source: EVENTBRIDGE_SOURCE,
    DetailType: delivery.event_type,
    Detail: delivery.body,
    ...(timestamp ? { Time: timestamp } : {}),
  };
  if (eventBridgeEntrySize(entry) > EVENTBRIDGE_MAX_ENTRY_BYTES)
    entry.Detail = thinBody(delivery.body, EVENTBRIDGE_MAX_ENTRY_BYTES, 'an EventBridge entry');
  const [{ PutEventsCommand }, client] = await Promise.all([
    import('@aws-sdk/client-eventbridge'),
    eventBridgeClientFor(regionOf(destination), destination.role_arn, externalId, keyId),
  ]);
  try {
    const out = await client.send(new PutEventsCommand({ Entries: [entry] }));
    const failed = out.Entries?.[0];
    if ((out.FailedEntryCount ?? 0) > 0 || failed?.ErrorCode)
      return {
        status: null,
        error:
          `PutEvents to ${destination.bus_arn}: ${failed?.ErrorCode ?? 'FailedEntry'}: ${failed?.ErrorMessage ?? ''}`.trim(),
        retryAfterSeconds: undefined,
        ms: Date.now() - started,
      };
    return {
      status: out.$metadata.httpStatusCode ?? 200,
      error: null,
      retryAfterSeconds: undefined,
      ms: Date.now() - started,
    };
  } catch (err) {
    return refusedAttempt(`PutEvents to ${destination.bus_arn}`, err, started);
  }
}

/** The change's time the body carries, for the entry's `Time` (a body without one leaves it to EventBridge). */
function timestampOf(body: string): Date | undefined {
  try {
    const t = (JSON.parse(body) as { timestamp?: unknown }).timestamp;
    const at = typeof t === 'string' ? new Date(t) : undefined;
    return at && !Number.isNaN(at.getTime()) ? at : undefined;
  } catch {
    return undefined;
  }
}
