import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import type { RequestContext } from '#shared/context.ts';
import * as v from 'valibot';
import { validate } from '#domain/validation.ts';
import {
  allStores,
  changeKeyDestination,
  changeKeySettings,
  changeKeyWebhook,
  issueKey,
  keyExternalId,
  keysOfStore,
  openStore,
  revokeKeyNow,
  rotateKey,
} from '#app/admin-keys.ts';
import { publicKey } from '#domain/key/api-key.ts';
import { parseAbilities } from '#domain/key/abilities.ts';
import { checkWebhookUrl } from '#domain/key/webhook-url.ts';
import { parseBusArn, parseQueueUrl, parseRoleArn, type AwsDestination } from '#domain/key/destination.ts';
import { DEFAULT_EVENTS, parseEventTypes } from '#domain/webhook/event-subscription.ts';
import { config } from '#shared/config.ts';
import { encryptWebhookSecret } from '#secrets/webhook-secret-cipher.ts';
import { CurrencyArg, IntegerArg, KeyIdArg, McpArg, StoreIdArg } from './args.ts';
import { shown } from './answer.ts';

/** The admin surface (docs/contract.md#admin-cli): one entry per CLI command, each validating its own arguments. */

/** One command: its arguments validated, a use case called with the command's request context (no time budget). */
export type AdminCommand = (ctx: RequestContext, args: Record<string, unknown>) => Promise<unknown>;

const Name = v.pipe(v.string(), v.trim(), v.minLength(1, 'is required'), v.maxLength(200));

/** Where each argument check below is answered: a refusal naming the argument. */
const invalid = (message: string, field: string) => refused('validation_failed', message, field);

function webhookUrlOrNull(raw: string | undefined): string | null | Refused {
  if (raw === undefined || raw === '') return null;
  const checked = checkWebhookUrl(raw, config().allowPrivateWebhooks);
  return checked.ok ? checked.url : invalid(checked.reason, 'webhook_url');
}

/** `--exclude-own true|false`: the key's webhook skips the events the key itself caused. */
const ExcludeOwn = v.optional(
  v.union([
    v.boolean(),
    v.pipe(
      v.picklist(['true', 'false'], 'must be true or false'),
      v.transform((s) => s === 'true'),
    ),
  ]),
);

/** A write budget per hour (docs/api.md#write-budget): 1-1,000,000, or `none` for no limit. */
const PerHour = v.union([
  v.pipe(
    v.literal('none'),
    v.transform(() => null),
  ),
  IntegerArg(1, 1_000_000),
]);

/** `--sqs-queue-url` or `--eventbridge-bus-arn`, with `--role-arn`: an AWS destination, checked (docs/destinations.md). */
function awsDestinationArg(a: {
  sqs_queue_url?: string;
  eventbridge_bus_arn?: string;
  role_arn: string;
}): AwsDestination | Refused {
  if ((a.sqs_queue_url === undefined) === (a.eventbridge_bus_arn === undefined))
    return invalid('give either --sqs-queue-url URL or --eventbridge-bus-arn ARN', 'sqs_queue_url');
  const role = parseRoleArn(a.role_arn);
  if (!role.ok) return invalid(role.reason, 'role_arn');
  if (a.sqs_queue_url !== undefined) {
    const queue = parseQueueUrl(a.sqs_queue_url, config().allowPrivateWebhooks);
    if (!queue.ok) return invalid(queue.reason, 'sqs_queue_url');
    return { kind: 'sqs', ...queue.value, role_arn: role.value };
  }
  const bus = parseBusArn(a.eventbridge_bus_arn as string);
  if (!bus.ok) return invalid(bus.reason, 'eventbridge_bus_arn');
  return { kind: 'eventbridge', bus_arn: bus.value, role_arn: role.value };
}

function eventsArg(raw: string): string[] | Refused {
  const parsed = parseEventTypes(raw);
  return parsed.ok ? parsed.value : invalid(parsed.message, 'events');
}

/** The store and key commands; the other groups are in GROUPS. */
const keyCommands: Record<string, AdminCommand> = {
  'stores create': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        id: StoreIdArg,
        name: Name,
        currency: CurrencyArg,
      }),
      args,
    );
    if (isRefused(a)) return a;
    return openStore(ctx, a);
  },

  /** Stores made since stores were indexed (shared/db/keys.ts); older ones open by id. */
  'stores list': async (ctx, args) => {
    const a = validate(v.strictObject({}), args);
    if (isRefused(a)) return a;
    return { data: await allStores(ctx) };
  },

  'keys create': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        store: StoreIdArg,
        name: Name,
        abilities: v.string(),
        webhook_url: v.optional(v.string()),
        events: v.optional(v.string()),
        exclude_own: ExcludeOwn,
        mcp: v.optional(McpArg),
        writes_per_hour: v.optional(PerHour),
        status_changes_per_hour: v.optional(PerHour),
      }),
      args,
    );
    if (isRefused(a)) return a;
    const abilities = parseAbilities(a.abilities);
    if (!abilities.ok) return invalid(abilities.message, 'abilities');
    // A key that may call nothing is a mistake, not a key.
    if (abilities.value.length === 0) return invalid('abilities: name at least one ability', 'abilities');
    const webhookUrl = webhookUrlOrNull(a.webhook_url);
    if (isRefused(webhookUrl)) return webhookUrl;
    const events = a.events === undefined ? [...DEFAULT_EVENTS] : eventsArg(a.events);
    if (isRefused(events)) return events;
    const issued = await issueKey(
      ctx,
      {
        store: a.store,
        name: a.name,
        abilities: abilities.value,
        webhookUrl,
        events,
        excludeOwn: a.exclude_own ?? false,
        mcp: a.mcp ?? 'full',
        writesPerHour: a.writes_per_hour ?? null,
        statusChangesPerHour: a.status_changes_per_hour ?? null,
      },
      encryptWebhookSecret,
    );
    return shown(issued, ({ record, token, webhookSecret }) => {
      const { status: _s, revoked_at: _r, last_used_at: _l, ...key } = publicKey(record);
      return { ...key, token, webhook_secret: webhookSecret };
    });
  },

  'keys list': async (ctx, args) => {
    const a = validate(v.strictObject({ store: StoreIdArg }), args);
    if (isRefused(a)) return a;
    // `kind` tells an OAuth grant (docs/oauth.md, named after its client) from a key made here.
    return shown(await keysOfStore(ctx, a.store), (keys) => ({
      data: keys.map((k) => ({ ...publicKey(k), kind: k.kind ?? 'key' })),
    }));
  },

  'keys revoke': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg }), args);
    if (isRefused(a)) return a;
    return shown(await revokeKeyNow(ctx, a.id), publicKey);
  },

  'keys rotate': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg }), args);
    if (isRefused(a)) return a;
    return shown(await rotateKey(ctx, a.id), ({ record, token }) => ({ ...publicKey(record), token }));
  },

  /** `--url`, `--events` and/or `--exclude-own`; what is not given stays as it is. */
  'keys set-webhook': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        id: KeyIdArg,
        url: v.optional(v.string()),
        events: v.optional(v.string()),
        exclude_own: ExcludeOwn,
      }),
      args,
    );
    if (isRefused(a)) return a;
    if (a.url === undefined && a.events === undefined && a.exclude_own === undefined)
      return invalid("give --url ('' removes it), --events and/or --exclude-own", 'url');
    const webhookUrl = a.url === undefined ? undefined : webhookUrlOrNull(a.url);
    if (isRefused(webhookUrl)) return webhookUrl;
    const events = a.events === undefined ? undefined : eventsArg(a.events);
    if (isRefused(events)) return events;
    const changes = {
      ...(webhookUrl !== undefined ? { webhook_url: webhookUrl } : {}),
      ...(events !== undefined ? { events } : {}),
      ...(a.exclude_own !== undefined ? { exclude_own: a.exclude_own } : {}),
    };
    return shown(await changeKeyWebhook(ctx, a.id, changes), publicKey);
  },

  /**
   * The key's events go to an SQS queue or an EventBridge bus in the integrator's account, through
   * their role (which must trust the signer with the key's `aws_external_id`); replaces a webhook URL.
   */
  'keys set-destination': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        id: KeyIdArg,
        sqs_queue_url: v.optional(v.string()),
        eventbridge_bus_arn: v.optional(v.string()),
        role_arn: v.string(),
      }),
      args,
    );
    if (isRefused(a)) return a;
    const destination = awsDestinationArg(a);
    if (isRefused(destination)) return destination;
    return shown(await changeKeyDestination(ctx, a.id, destination), publicKey);
  },

  /** The external id the key's destination role names in its trust policy (made now for a key made before destinations). */
  'keys external-id': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg }), args);
    if (isRefused(a)) return a;
    return keyExternalId(ctx, a.id);
  },

  /** `--mcp read-only|full`: which MCP tools the key gets; HTTP is unaffected. */
  'keys set-mcp': async (ctx, args) => {
    const a = validate(v.strictObject({ id: KeyIdArg, mcp: McpArg }), args);
    if (isRefused(a)) return a;
    return shown(await changeKeySettings(ctx, a.id, { mcp: a.mcp }), publicKey);
  },

  /** `--writes-per-hour` and/or `--status-changes-per-hour`, a number or `none`; what is not given stays. */
  'keys set-budget': async (ctx, args) => {
    const a = validate(
      v.strictObject({
        id: KeyIdArg,
        writes_per_hour: v.optional(PerHour),
        status_changes_per_hour: v.optional(PerHour),
      }),
      args,
    );
    if (isRefused(a)) return a;
    if (a.writes_per_hour === undefined && a.status_changes_per_hour === undefined)
      return invalid('give --writes-per-hour and/or --status-changes-per-hour (a number or none)', 'writes_per_hour');
    const { id, ...changes } = a;
    return shown(await changeKeySettings(ctx, id, changes), publicKey);
  },
};

type Group = () => Promise<Record<string, AdminCommand>>;
const webhooks: Group = async () => (await import('./webhook-commands.ts')).webhookCommands;
const requests: Group = async () => (await import('./request-commands.ts')).requestCommands;

/**
 * The other groups by a command's first word, each module loaded only when one of its commands
 * runs: a CLI start (one command) then loads one group and its use cases, not every one.
 */
const GROUPS: Record<string, Group[]> = {
  keys: [requests, webhooks],
  webhooks: [webhooks],
  orders: [async () => (await import('./order-commands.ts')).orderCommands],
  products: [async () => (await import('./product-commands.ts')).productCommands],
  oauth: [async () => (await import('./oauth-commands.ts')).oauthCommands],
};

/** The command of this name (`keys create`), or undefined when there is none. */
export async function findCommand(name: string): Promise<AdminCommand | undefined> {
  if (Object.hasOwn(keyCommands, name)) return keyCommands[name];
  const word = name.split(' ')[0] as string;
  for (const load of Object.hasOwn(GROUPS, word) ? (GROUPS[word] as Group[]) : []) {
    const group = await load();
    if (Object.hasOwn(group, name)) return group[name];
  }
  return undefined;
}

/** Every command's name (what an unknown command's error lists): loads every group. */
export async function commandNames(): Promise<string[]> {
  const groups = await Promise.all([...new Set(Object.values(GROUPS).flat())].map((load) => load()));
  return [...new Set([...Object.keys(keyCommands), ...groups.flatMap((g) => Object.keys(g))])];
}
