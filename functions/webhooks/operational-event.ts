import type { SNSClient } from '@aws-sdk/client-sns';
import { config } from '#shared/config.ts';
import { awsClientBuilt } from '#shared/aws-clients.ts';
import { errorFields, log } from '#shared/log.ts';

// Loaded on the first event (an endpoint parked: rare), not with the signer, whose every cold
// start would otherwise import the SNS client; the local stack, without a topic, never loads it.
const sdk = () => import('@aws-sdk/client-sns');
let client: SNSClient | undefined;

/**
 * An operational event for whoever runs the platform (not the tenant): one log line always, and
 * one SNS message to the alarm topic when OPERATIONS_TOPIC_ARN is set (AWS). A failed publish is
 * logged, never thrown: the alarm on the metric still fires.
 */
export async function publishOperationalEvent(type: string, data: Record<string, unknown>): Promise<void> {
  const event = { type, timestamp: new Date().toISOString(), data };
  log('warn', type, data);
  const topicArn = config().operationsTopicArn;
  if (!topicArn) return;
  try {
    const { PublishCommand, SNSClient } = await sdk();
    client ??= awsClientBuilt(new SNSClient({ region: config().region, maxAttempts: 3 }));
    await client.send(new PublishCommand({ TopicArn: topicArn, Subject: type, Message: JSON.stringify(event) }));
  } catch (err) {
    log('error', 'could not publish an operational event', { type, ...errorFields(err) });
  }
}
