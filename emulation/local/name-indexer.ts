/**
 * The local stack's name indexer: the Lambda the CDK stack deploys (functions/name-index), fed by
 * a stream poller with the mapping's filter, as the event-source mapping feeds it in AWS.
 */
import { handler } from '#functions/name-index/handler.ts';
import { isPendingNameWrite } from '#db/name-index/stream.ts';
import { errorFields, log as logJson } from '#shared/log.ts';
import { StreamPoller } from './stream-poller.ts';

export function startNameIndexer(options: { streamArn: string; endpoint: string }): { stop(): Promise<void> } {
  const aborter = new AbortController();
  const poller = new StreamPoller(options.streamArn, options.endpoint, handler, aborter.signal, {
    filter: isPendingNameWrite,
    consumer: 'name-index',
    batchSize: 1000,
  });
  const loop = poller.run().catch((err: unknown) => logJson('error', 'name indexer stopped', errorFields(err)));
  return {
    stop: async () => {
      aborter.abort();
      await loop;
    },
  };
}
