/**
 * `npm run admin -- <group> <verb> [--flag value ...] [--json] [--function NAME_OR_ARN]`
 *
 * Locally it runs the admin handler in this process against the local stack's store
 * (DYNAMODB_ENDPOINT, default http://127.0.0.1:$DYNAMODB_PORT); with --function it invokes the
 * deployed admin Lambda instead. With --json, stdout carries exactly one JSON document.
 */
import { readFileSync } from 'node:fs';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import type { AdminEvent, AdminResult } from '#functions/admin/handler.ts';
import { EVENT_TYPES } from '#domain/event/event.ts';
import { DEFAULT_EVENTS } from '#domain/webhook/event-subscription.ts';
import { lambdaInvoker, localInvoker, unreachableHint } from './admin-invoke.ts';

const USAGE = `usage: npm run admin -- <command> [--json] [--function NAME]
  console [--port N]                               (a web console on 127.0.0.1: docs/console.md)
  stores list
  stores create --id ID --name NAME --currency CODE
  keys create --store ID --name NAME --abilities a,b,... [--webhook-url URL] [--events e,f,...] [--exclude-own true] [--mcp read-only]
                 [--writes-per-hour N] [--status-changes-per-hour N]
  keys list --store ID
  keys revoke --id KEY_ID
  keys rotate --id KEY_ID
  keys rotate-webhook-secret --id KEY_ID
  keys set-webhook --id KEY_ID [--url URL] [--events e,f,...] [--exclude-own true|false]   (--url '' removes it)
                 events: ${EVENT_TYPES.join(', ')} (default: ${DEFAULT_EVENTS.join(', ')})
                 a type may name fields: product.updated:price,name (only events that changed any of them)
  keys set-budget --id KEY_ID [--writes-per-hour N|none] [--status-changes-per-hour N|none]
  keys set-mcp --id KEY_ID --mcp read-only|full    (read-only: the MCP server offers the key its read tools only)
  orders place --store ID --file ORDER.json
  orders mark-paid --store ID --reference REF
  products reindex-names --store ID                (once after deploying over products older than filter[name]'s index)
  webhooks deliveries --id KEY_ID                  (the log, and the endpoint's state: active or parked, and why)
  webhooks endpoints --store ID                    (each key's webhook endpoint: active or parked)
  keys requests --id KEY_ID [--limit N]            (the key's newest requests, from the local stack's request log)
  webhooks redeliver --id KEY_ID --event EVENT_ID
  webhooks redeliver --id KEY_ID --since TIME [--state pending|delivered|failed]   (in bulk, oldest first)
  webhooks ping --id KEY_ID                        (a signed webhook.ping to the key's URL: status, ms)
  webhooks replay --store ID --event EVENT_ID      (fan an event out again: keys without it get it)
  webhooks events --store ID [--after N] [--limit N]   (the store's event log from sequence N + 1)
  oauth requests                                   (the requests waiting for a decision, newest first: code, app, redirect host, abilities, age)
  oauth show --code CODE                           (who asks, its redirect host and abilities, and whether it is pending)
  oauth approve --code CODE --store ID [--abilities a,b,...] [--mcp read-only] [--writes-per-hour N]
                 (an OAuth client's approval code: docs/oauth.md; abilities no wider than it asked)
  oauth deny --code CODE`;

/**
 * How every command ends: its last text, then its exit code, with the process left to end by itself.
 * process.exit() right after a write dropped what a pipe had not taken yet: a write to a pipe is
 * asynchronous, and a pipe holds 64 KiB, so `--json | jq` got the first 64 KiB of a longer answer,
 * with exit code 0. Nothing else keeps the process alive once the command is done: the SDK's idle
 * keep-alive sockets are unref'd and every store call clears its timers; only the writes still
 * under way hold it until the reader has them.
 */
function end(code: number, text: string): void {
  (code === 0 ? process.stdout : process.stderr).write(text);
  process.exitCode = code;
}

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

/** `console [--port N] [--function NAME]`: serves the web console until Ctrl+C (docs/console.md). */
async function runConsole(argv: string[]) {
  const flag = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const port = Number(flag('port') ?? 0);
  const fn = flag('function');
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    return end(2, 'error: --port must be a port number (0 or none picks a free one)\n');
  const invoke = fn ? lambdaInvoker(fn) : localInvoker();
  if (!fn) {
    // Fail at start, in one line, rather than on the first page.
    try {
      await invoke({ command: 'stores list', args: {} });
    } catch (err) {
      return end(1, `error: ${(err as Error).message || (err as Error).name}${unreachableHint(err)}\n`);
    }
  }
  const { startConsole } = await import('./console/server.ts');
  const running = await startConsole({ invoke, port });
  process.stdout.write(
    `Admin console (${fn ? `admin Lambda ${fn}` : 'local stack'}) on ${running.origin}\n` +
      `Open this address once (it carries this run's secret; 127.0.0.1 only):\n  ${running.loginUrl}\nCtrl+C stops it.\n`,
  );
  const stop = () => void running.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

async function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) return end(0, USAGE + '\n');
  if (process.argv[2] === 'console') return runConsole(process.argv.slice(3));
  let parsed;
  try {
    parsed = parseArgs(process.argv.slice(2));
  } catch (err) {
    return end(2, `error: ${(err as Error).message}\n`);
  }
  const { event, json, fn } = parsed;
  let result: AdminResult;
  try {
    result = await (fn ? lambdaInvoker(fn) : localInvoker())(event);
  } catch (err) {
    const e = err as Error;
    return end(1, `error: ${e.message || e.name}${fn ? '' : unreachableHint(err)}\n`);
  }
  if (!result.ok) {
    // Argument names come back as fields (`webhook_url`); show them as the flags the user typed.
    const f = result.error.field;
    const field = f ? ` (${/^[a-z_]+$/.test(f) ? `--${f.replace(/_/g, '-')}` : f})` : '';
    return end(1, `error: ${result.error.code}: ${result.error.message}${field}\n`);
  }
  end(0, JSON.stringify(result.data, null, json ? undefined : 2) + '\n');
}

void main();
