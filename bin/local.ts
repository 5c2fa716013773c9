/**
 * `npm start`: the whole service on this machine. DynamoDB Local (persisted under $DATA_DIR),
 * the table, the demo store on first start, and the API on http://127.0.0.1:$PORT/api/v1/integrations.
 * With DYNAMODB_ENDPOINT set it starts no embedded store and uses that endpoint instead.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { checkJava } from '#emulation/local/dynamodb-local.ts';
import { intFrom, loadConfig } from '#shared/config.ts';

const env = process.env;
// The SDK's notice about the Node versions its next releases drop is not news at every start (this
// runs on the Node that npm installs: docs/local.md#node).
env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const dataDir = path.resolve(env.DATA_DIR || '.data');
const external = env.DYNAMODB_ENDPOINT || undefined;
// Webhook secrets are sealed at rest locally too (AES-GCM, docs/webhooks.md); `npm run admin` finds the same file.
env.WEBHOOK_SECRET_KEY_FILE ||= path.join(dataDir, 'webhook-secret.key');
// One line per request, read by `npm run admin -- keys requests` and the console (docs/console.md).
env.REQUEST_LOG_FILE ||= path.join(dataDir, 'requests.jsonl');

/**
 * Every setting, this file's and shared/config.ts's, is checked before anything starts. A bad one
 * used to surface only where it was first read, after DynamoDB Local had started:
 * RATE_LIMIT_PER_MINUTE=100000 waited out the store's 120 s start-up deadline and then blamed the
 * endpoint.
 */
let port: number;
let dynamodbPort: number;
try {
  port = intFrom('PORT', env.PORT, 3000, 0, 65535);
  dynamodbPort = intFrom('DYNAMODB_PORT', env.DYNAMODB_PORT, 8000, 1, 65535);
  loadConfig(env);
} catch (err) {
  process.stderr.write(`bad setting: ${(err as Error).message} (docs/local.md, "Settings")\n`);
  process.exit(1);
}

if (!external) {
  const java = checkJava();
  if (!java.ok) {
    process.stderr.write(java.message + '\n');
    process.exit(1);
  }
}

mkdirSync(dataDir, { recursive: true });

const { startLocalStack } = await import('#emulation/local/stack.ts');
const { seedDemoStore } = await import('#emulation/local/seed.ts');

let stack;
try {
  stack = await startLocalStack({
    port,
    dynamodbPort,
    dataDir: path.join(dataDir, 'dynamodb'),
    endpoint: external,
    log: (line) => process.stdout.write(line + '\n'),
    // The gateway keeps running and recovers by itself once a store answers on the port again.
    storeRecovery: 'stop this process (Ctrl-C) and run `npm start` again; the data is kept',
  });
} catch (err) {
  const e = err as NodeJS.ErrnoException;
  const hint = e.code === 'EADDRINUSE' ? ` (port ${port} is taken: set PORT)` : '';
  process.stderr.write(`could not start the local stack: ${e.message}${hint}\n`);
  process.exit(1);
}

// The token is shown once by the admin API; the local stack keeps the demo one in $DATA_DIR so
// that every start can print it again (this file is local developer state, never deployed).
const demoKeyFile = path.join(dataDir, 'demo-key.json');
const seeded = await seedDemoStore();
if (seeded) {
  writeFileSync(demoKeyFile, JSON.stringify(seeded, null, 2) + '\n', { mode: 0o600 });
}
const demo =
  seeded ??
  (existsSync(demoKeyFile) ? (JSON.parse(readFileSync(demoKeyFile, 'utf8')) as { token: string }) : undefined);

process.stdout.write(
  [
    '',
    `Store integration API listening on ${stack.baseUrl}`,
    `  MCP endpoint: ${stack.baseUrl}/mcp   (Streamable HTTP, the same bearer key; docs/mcp.md)`,
    `  reference:    ${stack.baseUrl}/docs   (OpenAPI: ${stack.baseUrl}/openapi.json, no key needed)`,
    `  store:        ${external ? `${external} (external)` : `DynamoDB Local on port ${dynamodbPort}, data in ${path.relative(process.cwd(), dataDir).startsWith('..') ? dataDir : path.relative(process.cwd(), dataDir) || '.'}`}`,
    `  demo store:   demo${seeded ? ' (seeded now)' : ''}`,
    `  node:         ${process.version}   (docs/local.md#node)`,
    demo
      ? `  demo key:     ${demo.token}   (all six abilities)`
      : '  demo key:     unknown (delete the data directory to seed again)',
    '',
    demo
      ? `  curl -H "Authorization: Bearer ${demo.token}" -H "Accept: application/json" ${stack.baseUrl}/products`
      : '',
    '',
  ].join('\n') + '\n',
);

/**
 * How long a stop waits for work in flight (a poller's batch, a webhook POST) before the process
 * ends anyway. Nothing is lost by ending it: the next start resumes the stream pollers from their
 * stored positions and queues again every delivery still waiting (emulation/local/pending-deliveries.ts),
 * and DynamoDB Local, killed with the process, keeps every acknowledged write. Without the bound, a
 * stop on a loaded machine could wait on a DynamoDB call for longer than a supervisor waits.
 */
const STOP_GRACE_MS = 15_000;

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${signal}: stopping...\n`);
  const grace = setTimeout(() => {
    process.stderr.write(
      `${signal}: work in flight did not finish within ${STOP_GRACE_MS / 1000} s; stopping now (it resumes at the next start)\n`,
    );
    process.exit(1);
  }, STOP_GRACE_MS);
  grace.unref();
  await stack.stop();
  clearTimeout(grace);
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
