import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { config, resetConfig } from '#shared/config.ts';
import { resetDbClients } from '#db/core/client.ts';
import { ensureTable, waitForStore } from './bootstrap.ts';
import { installLocalCommitBarrier } from './commit-barrier.ts';
import { installTableWriteSignal } from './table-writes.ts';
import { startDynamoDbLocal, type DynamoDbLocal } from './dynamodb-local.ts';
import { createGateway, type GatewayOptions } from './gateway.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { setRequestLogging } from '#shared/log.ts';
import { setMetricsEnabled } from '#shared/metrics.ts';
import { startWebhookPipeline } from './webhook-pipeline.ts';
import { startNameIndexer } from './name-indexer.ts';
import { recordKeyFile } from './key-marker.ts';
import { requestLogWriter } from './request-log.ts';
import { recordLocalEndpoints } from './local-endpoints.ts';
import type { IntegratorAws } from './integrator-aws.ts';

export interface LocalStackOptions {
  port: number;
  host?: string;
  /** Ignored when `endpoint` is given. */
  dynamodbPort: number;
  /** DynamoDB Local data directory; null keeps it in memory (tests). */
  dataDir: string | null;
  /** Use this DynamoDB endpoint instead of starting the embedded store. */
  endpoint?: string;
  tableName?: string;
  env?: Record<string, string>;
  log?: (line: string) => void;
  /** What the line about the embedded store's unexpected exit tells the reader to do. */
  storeRecovery?: string;
  gateway?: GatewayOptions;
  /** false: no stream consumers (webhook fan-out, name indexer); a bench that counts one request's work alone. */
  streamConsumers?: boolean;
}

export interface LocalStack {
  baseUrl: string;
  port: number;
  endpoint: string;
  tableCreated: boolean;
  streamArn: string | undefined;
  /** The embedded store's process id (DynamoDB Local's JVM); undefined with `endpoint`. The bench reads its CPU. */
  storePid: number | undefined;
  /**
   * SQS and EventBridge destinations' side (docs/destinations.md, "Locally"): the SQS emulator's endpoint
   * (their queues live there) and the integrator's STS and EventBridge; undefined without stream consumers.
   */
  destinations: { sqsEndpoint: string; integrator: IntegratorAws } | undefined;
  stop(): Promise<void>;
}

/**
 * The whole service on one machine: embedded store (unless an endpoint is given), the table, and
 * the local API Gateway in front of the same handlers the CDK stack deploys. The environment is
 * set before the first handler reads its configuration.
 */
export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  let store: DynamoDbLocal | undefined;
  const endpoint =
    options.endpoint ??
    (store = startDynamoDbLocal({
      port: options.dynamodbPort,
      dataDir: options.dataDir,
      log: options.log,
      recovery: options.storeRecovery,
    })).endpoint;
  Object.assign(process.env, {
    DYNAMODB_ENDPOINT: endpoint,
    TABLE_NAME: options.tableName ?? process.env.TABLE_NAME ?? 'integrations',
    ALLOW_PRIVATE_WEBHOOKS: '1',
    ...options.env,
  });
  resetConfig();
  resetDbClients();
  installLocalCommitBarrier();
  installTableWriteSignal();
  setRequestLogging(false);
  // EMF lines are for CloudWatch; the local console shows the gateway's request lines instead.
  setMetricsEnabled(false);
  try {
    // Java takes seconds to start, and over 30 s on a loaded machine (measured: 35 s at load 35 on 2 cores).
    await waitForStore(120_000);
    const table = await ensureTable();
    // So that `npm run admin` from another DATA_DIR refuses instead of making a key of its own.
    const { webhookSecretKeyFile, webhookSecretKmsKeyId } = config();
    if (webhookSecretKeyFile && !webhookSecretKmsKeyId) await recordKeyFile(webhookSecretKeyFile);
    // REQUEST_LOG_FILE (bin/local.ts: $DATA_DIR/requests.jsonl) is what `keys requests` reads.
    const requestLog = process.env.REQUEST_LOG_FILE ? requestLogWriter(process.env.REQUEST_LOG_FILE).write : undefined;
    const server: Server = createGateway({ requestLog, ...options.gateway, log: options.log });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host ?? '127.0.0.1', () => resolve());
    });
    const port = (server.address() as AddressInfo).port;
    let webhooks: Awaited<ReturnType<typeof startWebhookPipeline>> | undefined;
    let nameIndexer: ReturnType<typeof startNameIndexer> | undefined;
    try {
      const streamArn = options.streamConsumers === false ? undefined : table.streamArn;
      webhooks = streamArn ? await startWebhookPipeline({ streamArn, endpoint, log: options.log }) : undefined;
      nameIndexer = streamArn ? startNameIndexer({ streamArn, endpoint }) : undefined;
      // So that `npm run admin` (another process) pings an SQS or EventBridge destination through them.
      if (webhooks)
        await recordLocalEndpoints({
          sqs: webhooks.sqsEndpoint,
          sts: webhooks.integrator.endpoint,
          eventbridge: webhooks.integrator.endpoint,
        });
    } catch (err) {
      server.close();
      server.closeAllConnections();
      throw err;
    }
    return {
      baseUrl: `http://127.0.0.1:${port}${API_BASE_PATH}`,
      port,
      endpoint,
      tableCreated: table.created,
      streamArn: table.streamArn,
      storePid: store?.process.pid,
      destinations: webhooks && { sqsEndpoint: webhooks.sqsEndpoint, integrator: webhooks.integrator },
      stop: async () => {
        await nameIndexer?.stop();
        await webhooks?.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        resetDbClients();
        await store?.stop();
      },
    };
  } catch (err) {
    await store?.stop();
    throw err;
  }
}
