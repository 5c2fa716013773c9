/**
 * How the admin tools (bin/admin.ts, the console in bin/console/) reach the admin handler: in this
 * process against the local stack's store, or by invoking the deployed admin Lambda with the
 * operator's own AWS credentials. Both answer the handler's `{ok, data | error}`.
 */
import { resolve } from 'node:path';
import type { AdminEvent, AdminResult } from '#functions/admin/handler.ts';

export type AdminInvoker = (event: AdminEvent) => Promise<AdminResult>;

export function lambdaInvoker(fn: string): AdminInvoker {
  let client: import('@aws-sdk/client-lambda').LambdaClient | undefined;
  return async (event) => {
    const { LambdaClient, InvokeCommand } = await import('@aws-sdk/client-lambda');
    client ??= new LambdaClient({});
    const out = await client.send(new InvokeCommand({ FunctionName: fn, Payload: Buffer.from(JSON.stringify(event)) }));
    const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
    if (out.FunctionError) throw new Error(`admin Lambda failed: ${text}`);
    return JSON.parse(text) as AdminResult;
  };
}

/** Where the local invoker looks for the stack: what a "cannot reach" message names. */
function localTarget() {
  const dataDir = resolve(process.env.DATA_DIR || '.data');
  return {
    endpoint: process.env.DYNAMODB_ENDPOINT || `http://127.0.0.1:${process.env.DYNAMODB_PORT || 8000}`,
    dataDir,
  };
}

export function localInvoker(): AdminInvoker {
  const { endpoint, dataDir } = localTarget();
  process.env.DYNAMODB_ENDPOINT ||= endpoint;
  // The local stack admits loopback webhook receivers; AWS never does (the Lambda has no such flag).
  process.env.ALLOW_PRIVATE_WEBHOOKS ??= '1';
  // The local stack's key for webhook secrets at rest and its request log (bin/local.ts), unless KMS is configured.
  if (!process.env.WEBHOOK_SECRET_KMS_KEY_ID)
    process.env.WEBHOOK_SECRET_KEY_FILE ||= resolve(dataDir, 'webhook-secret.key');
  process.env.REQUEST_LOG_FILE ||= resolve(dataDir, 'requests.jsonl');
  let loaded: Promise<AdminInvoker> | undefined;
  return async (event) => {
    loaded ??= (async () => {
      await reachable(process.env.DYNAMODB_ENDPOINT!);
      const { setLogSink } = await import('#shared/log.ts');
      setLogSink((line) => process.stderr.write(line + '\n'));
      const { installLocalCommitBarrier } = await import('#emulation/local/commit-barrier.ts');
      installLocalCommitBarrier();
      await sameKeyFileAsTheStack(dataDir);
      // `webhooks ping` of an SQS or EventBridge destination sends from here, to the stack's stand-ins.
      await (await import('#emulation/local/local-endpoints.ts')).useLocalEndpoints();
      return (await import('#functions/admin/handler.ts')).handler;
    })();
    return (await loaded)(event);
  };
}

/**
 * Before the handler, which would seal a new webhook secret with whatever key this process finds:
 * a CLI started with another DATA_DIR than the stack must refuse, not make a key the stack cannot
 * read (emulation/local/key-marker.ts records the stack's key file in the table).
 */
async function sameKeyFileAsTheStack(dataDir: string): Promise<void> {
  const { config } = await import('#shared/config.ts');
  const keyFile = config().webhookSecretKeyFile;
  if (config().webhookSecretKmsKeyId || !keyFile) return;
  const { checkKeyFile, LocalStackMismatch } = await import('#emulation/local/key-marker.ts');
  try {
    await checkKeyFile(keyFile);
  } catch (err) {
    if (err instanceof LocalStackMismatch) throw new Error(err.message);
    const e = err as Error & { code?: string };
    const reason = e.name === 'ResourceNotFoundException' ? `no table ${config().tableName} there` : (e.code ?? e.name);
    throw new Error(
      `cannot use the local stack's store at ${process.env.DYNAMODB_ENDPOINT} (table ${config().tableName}, DATA_DIR ${dataDir}; ${reason}): start it with "npm start", or run this command with the stack's DYNAMODB_PORT (or DYNAMODB_ENDPOINT) and DATA_DIR`,
    );
  }
}

/**
 * One TCP connect before the first command: a stopped stack is then one clear line at once,
 * instead of the SDK's retries ending in a logged `internal_error`.
 */
async function reachable(endpoint: string): Promise<void> {
  const { connect } = await import('node:net');
  const url = new URL(endpoint);
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) });
    socket.setTimeout(5000, () =>
      socket.destroy(Object.assign(new Error(`connect ETIMEDOUT ${endpoint}`), { code: 'ETIMEDOUT' })),
    );
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    socket.once('error', (err) =>
      reject(
        Object.assign(new Error(`cannot reach DynamoDB at ${endpoint}`), { code: (err as NodeJS.ErrnoException).code }),
      ),
    );
  });
}

/** One line for a failure to reach the stack, naming what was tried and how to point elsewhere. */
export function unreachableHint(err: unknown): string {
  const e = err as Error & { code?: string };
  if (
    !/ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ETIMEDOUT|cannot reach|connect/i.test(
      `${e.message} ${e.code ?? ''} ${e.name}`,
    )
  )
    return '';
  const { dataDir } = localTarget();
  return ` (${e.code ?? 'unreachable'}; DATA_DIR ${dataDir}): start the stack with "npm start", or point this at the running one with the DYNAMODB_PORT (or DYNAMODB_ENDPOINT) and DATA_DIR it was started with`;
}
