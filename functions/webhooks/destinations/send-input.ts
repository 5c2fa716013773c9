import type { AwsDestination } from '#domain/key/destination.ts';
import type { Delivery } from '#domain/webhook/delivery.ts';

/** One send to an SQS or EventBridge destination: what the senders need of the key and the delivery. */
export interface DestinationSend {
  keyId: number;
  externalId: string;
  destination: AwsDestination;
  delivery: Pick<Delivery, 'event_id' | 'event_type' | 'store_id' | 'round' | 'body'>;
}
