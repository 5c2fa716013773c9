/**
 * The admin CLI's commands (bin/admin.ts is its entry point, and serves the console itself): the
 * arguments parsed into an admin event, the handler's answer printed, an exit code.
 */
import { readFileSync } from 'node:fs';
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
  keys set-destination --id KEY_ID (--sqs-queue-url URL | --eventbridge-bus-arn ARN) --role-arn ARN
                 (events to your SQS queue or EventBridge bus instead of a URL: docs/destinations.md; --url '' of set-webhook removes it)
  keys external-id --id KEY_ID                     (the external id the destination role's trust policy names)
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
  webhooks ping --id KEY_ID                        (a webhook.ping to the key's URL, queue or bus now: status, ms)
  webhooks replay --store ID --event EVENT_ID      (fan an event out again: keys without it get it)
  webhooks events --store ID [--after N] [--limit N]   (the store's event log from sequence N + 1)
  oauth requests [--limit N] [--cursor C]          (who is asking, newest first: app, verified or not, client_id, IP, User-Agent, age; no codes; next_cursor continues)
  oauth show --code CODE                           (who asks, whether its name is verified, its IP and User-Agent, age, abilities, status)
  oauth approve --code CODE --store ID [--abilities a,b,...] [--mcp read-only] [--writes-per-hour N]
                 (CODE: the approval code the user reads out from their own screen, docs/oauth.md#approving-safely;
                  abilities no wider than it asked)
  oauth deny --code CODE`;

function parseArgs(argv: string[]): { event: AdminEvent; json: boolean; fn: string | undefined } {
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

/**
 * One command line (the words after `npm run admin --`, `console` aside) and what the CLI prints for
 * it: `text` on stdout when `code` is 0, else on stderr (1 a failed command, 2 a usage error).
 * bin/admin.ts prints it; a test can run many commands in its own process instead of starting npm,
 * tsx and the SDK for each.
 */
export async function runAdmin(argv: string[]): Promise<{ code: number; text: string }> {
  const end = (code: number, text: string) => ({ code, text });
  if (argv.includes('--help') || argv.includes('-h')) return end(0, USAGE + '\n');
  let parsed;
  try {
    parsed = parseArgs(argv);
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
  return end(0, JSON.stringify(result.data, null, json ? undefined : 2) + '\n');
}
