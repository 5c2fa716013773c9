import type { AddressInfo } from 'node:net';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { buildApp } from 'fauxqs';

/**
 * fauxqs' SQS emulator on loopback only. Its startFauxqs() listens on 0.0.0.0 whatever host it is
 * given (anyone on the network could read or purge the webhook queue), so this serves its request
 * handler (buildApp) on 127.0.0.1 itself and creates the queues through the SQS API.
 */
export interface LocalQueueServer {
  port: number;
  createQueue(name: string, attributes: Record<string, string>): Promise<{ queueUrl: string; queueArn: string }>;
  stop(): Promise<void>;
}

export async function startLocalQueueServer(): Promise<LocalQueueServer> {
  const app = buildApp({ logger: false, host: '127.0.0.1' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const client = new SQSClient({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  return {
    port,
    createQueue: async (name, attributes) => {
      const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      const out = await client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }));
      return { queueUrl: QueueUrl!, queueArn: out.Attributes!.QueueArn! };
    },
    stop: async () => {
      client.destroy();
      await app.close();
    },
  };
}
