/**
 * `npm run admin -- <group> <verb> [--flag value ...] [--json] [--function NAME_OR_ARN]`
 *
 * Locally it runs the admin handler in this process against the local stack's store
 * (DYNAMODB_ENDPOINT, default http://127.0.0.1:$DYNAMODB_PORT); with --function it invokes the
 * deployed admin Lambda instead. With --json, stdout carries exactly one JSON document.
 */
import { readFileSync } from 'node:fs';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import type { AdminEvent, AdminResult } from '../functions/admin/handler.ts';

const USAGE = `usage: npm run admin -- <command> [--json] [--function NAME]
  stores create --id ID --name NAME --currency CODE
  keys create --store ID --name NAME --abilities a,b,... [--webhook-url URL] [--events e,f,...]
  keys list --store ID
  keys revoke --id KEY_ID
  keys rotate --id KEY_ID
  keys rotate-webhook-secret --id KEY_ID
  keys set-webhook --id KEY_ID [--url URL] [--events e,f,...]   (--url '' removes it)
                 events: order.created, order.paid, order.status_changed (default all)
  orders place --store ID --file ORDER.json
  orders mark-paid --store ID --reference REF
  products reindex-names --store ID                (once after deploying over products older than filter[name]'s index)
  webhooks deliveries --id KEY_ID                  (the log, and the endpoint's state: active or parked, and why)
  webhooks endpoints --store ID                    (each key's webhook endpoint: active or parked)
  webhooks redeliver --id KEY_ID --event EVENT_ID
  webhooks redeliver --id KEY_ID --since TIME [--state pending|delivered|failed]   (in bulk, oldest first)
  webhooks ping --id KEY_ID                        (a signed webhook.ping to the key's URL: status, ms)
  webhooks replay --store ID --event EVENT_ID      (fan an event out again: keys without it get it)`;

export function parseArgs(argv: string[]): { event: AdminEvent; json: boolean; fn: string | undefined } {
  const words: string[] = [];
  const args: Record<string, unknown> = {};
  let json = false;
  let fn: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--json') json = true;
    else if (arg.startsWith('--')) {
      const [flag, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Error(`--${flag} needs a value`);
      if (flag === 'function') fn = value;
      else if (flag === 'file') args.file = JSON.parse(readFileSync(value, 'utf8'));
      else args[flag.replace(/-/g, '_')] = value;
    } else words.push(arg);
  }
  if (words.length !== 2) throw new Error('expected a command like "keys create" (npm run admin -- --help lists them)');
  return { event: { command: words.join(' '), args }, json, fn };
}

async function invokeLambda(fn: string, event: AdminEvent): Promise<AdminResult> {
  const { LambdaClient, InvokeCommand } = await import('@aws-sdk/client-lambda');
  const out = await new LambdaClient({}).send(new InvokeCommand({ FunctionName: fn, Payload: Buffer.from(JSON.stringify(event)) }));
  const text = Buffer.from(out.Payload ?? new Uint8Array()).toString('utf8');
  if (out.FunctionError) throw new Error(`admin Lambda failed: ${text}`);
  return JSON.parse(text) as AdminResult;
}

async function invokeLocally(event: AdminEvent): Promise<AdminResult> {
  process.env.DYNAMODB_ENDPOINT ||= `http://127.0.0.1:${process.env.DYNAMODB_PORT || 8000}`;
  // The local stack admits loopback webhook receivers; AWS never does (the Lambda has no such flag).
  process.env.ALLOW_PRIVATE_WEBHOOKS ??= '1';
  // The local stack's key for webhook secrets at rest (bin/local.ts), unless KMS is configured.
  if (!process.env.WEBHOOK_SECRET_KMS_KEY_ID) {
    const { resolve } = await import('node:path');
    process.env.WEBHOOK_SECRET_KEY_FILE ||= resolve(process.env.DATA_DIR || '.data', 'webhook-secret.key');
  }
  const { setLogSink } = await import('../shared/log.ts');
  setLogSink((line) => process.stderr.write(line + '\n'));
  const { handler } = await import('../functions/admin/handler.ts');
  return handler(event);
}

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const { event, json, fn } = parsed;
  let result: AdminResult;
  try {
    result = fn ? await invokeLambda(fn, event) : await invokeLocally(event);
  } catch (err) {
    const e = err as Error;
    const hint = /ECONNREFUSED|connect/i.test(`${e.message} ${(e as { code?: string }).code ?? ''}`)
      ? ` (is the local stack running? start it with "npm start", or set DYNAMODB_ENDPOINT)`
      : '';
    process.stderr.write(`error: ${e.message || e.name}${hint}\n`);
    process.exit(1);
  }
  if (!result.ok) {
    // Argument names come back as fields (`webhook_url`); show them as the flags the user typed.
    const f = result.error.field;
    const field = f ? ` (${/^[a-z_]+$/.test(f) ? `--${f.replace(/_/g, '-')}` : f})` : '';
    process.stderr.write(`error: ${result.error.code}: ${result.error.message}${field}\n`);
    process.exit(1);
  }
  process.stdout.write(JSON.stringify(result.data, null, json ? undefined : 2) + '\n');
  process.exit(0);
}

void main();
