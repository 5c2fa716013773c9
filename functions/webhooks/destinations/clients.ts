import type { SQSClient } from '@aws-sdk/client-sqs';
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { config } from '#shared/config.ts';
import { awsClientBuilt, awsClientDropped } from '#shared/aws-clients.ts';
import { roleCredentials } from './credentials.ts';

/**
 * One SQS or EventBridge client per destination's region, role and external id in this container,
 * signing with the role's cached session (credentials.ts). The endpoint is the region's, or
 * AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL_EVENTBRIDGE where an emulator sets one (the local stack,
 * the rehearsal); never the queue URL's host. An attempt is bounded as a webhook POST is: 3 s to
 * connect, the POST's timeout (10 s) for the answer, one SDK retry.
 */
const MAX_CLIENTS = 500;
type Client = SQSClient | EventBridgeClient;
const clients = new Map<string, Client>();

function options(region: string, roleArn: string, externalId: string, keyId: number) {
  return {
    region,
    credentials: () => roleCredentials(roleArn, externalId, keyId),
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 3000, requestTimeout: config().webhookResponseTimeoutMs },
  };
}

function remember<C extends Client>(id: string, client: C): C {
  if (clients.size >= MAX_CLIENTS) {
    const [oldest, dropped] = clients.entries().next().value as [string, Client];
    clients.delete(oldest);
    dropped.destroy();
    awsClientDropped(dropped);
  }
  clients.set(id, awsClientBuilt(client));
  return client;
}

export async function sqsClientFor(region: string, roleArn: string, externalId: string, keyId: number) {
  const id = `sqs ${region} ${roleArn} ${externalId}`;
  const known = clients.get(id) as SQSClient | undefined;
  if (known) return known;
  const { SQSClient } = await import('@aws-sdk/client-sqs');
  return remember(id, new SQSClient({ ...options(region, roleArn, externalId, keyId), useQueueUrlAsEndpoint: false }));
}

export async function eventBridgeClientFor(region: string, roleArn: string, externalId: string, keyId: number) {
  const id = `events ${region} ${roleArn} ${externalId}`;
  const known = clients.get(id) as EventBridgeClient | undefined;
  if (known) return known;
  const { EventBridgeClient } = await import('@aws-sdk/client-eventbridge');
  return remember(id, new EventBridgeClient(options(region, roleArn, externalId, keyId)));
}

/** Drops every client (a local stack that moves its emulators, tests). */
export function clearDestinationClients(): void {
  for (const client of clients.values()) {
    client.destroy();
    awsClientDropped(client);
  }
  clients.clear();
}
