/** The console's pages: each takes what the admin handler answered and returns a document. */
import { ABILITIES } from '#domain/key/abilities.ts';
import { EVENT_TYPES, ORDER_EVENT_TYPES } from '#domain/event/event.ts';
import { MCP_MODES, type McpMode } from '#domain/key/api-key.ts';
import { button, fieldList, html, layout, notice, secret, table, value, type Crumb, type Html } from './html.ts';

type Row = Record<string, unknown>;
export interface PageContext {
  csrf: string;
  /** A notice above the content (a refused or a finished action). */
  notice?: Html;
}

const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;
/** The form's one-time token (bin/console/once.ts): a second submit of the same form runs nothing. */
const onceField = (once: string) => html`<input type="hidden" name="once" value="${once}">`;
const home: Crumb = { label: 'Stores', href: '/' };
const storeCrumb = (store: string): Crumb => ({
  label: `Store ${store}`,
  href: `/stores/${encodeURIComponent(store)}`,
});
export const keyPath = (store: string, id: unknown) =>
  `/stores/${encodeURIComponent(store)}/keys/${encodeURIComponent(String(id))}`;
const keyCrumb = (store: string, key: Row): Crumb => ({
  label: `Key ${key.id} (${key.name})`,
  href: keyPath(store, key.id),
});

export function storesPage(ctx: PageContext, stores: Row[]): string {
  return layout(
    'Stores',
    [home],
    html`${ctx.notice}
${table(
  'Stores',
  stores.map((s) => ({ ...s })),
  ['id', 'name', 'currency_code', 'created_at'],
  {
    head: 'Keys',
    cell: (s) => html`<a href="/stores/${encodeURIComponent(String(s.id))}">Keys of ${s.id}</a>`,
  },
)}
<p class="hint">Stores created before the store index existed are not listed: open them by id.</p>
<p><a href="/oauth">Approve an app</a> by the approval code its user reads out from their own screen (OAuth, docs/oauth.md).</p>
<h2>Open a store by id</h2>
<form method="get" action="/open" class="stack"><label for="open-store">Store id</label>
<input type="text" id="open-store" name="store" required pattern="[a-z0-9][a-z0-9-]{0,62}" autocomplete="off">
<div><button type="submit">Open</button></div></form>
<h2>Create a store</h2>
<form method="post" action="/stores" class="stack">${csrfField(ctx.csrf)}
<div><label for="store-id">Id (lower-case letters, digits, hyphens)</label><input type="text" id="store-id" name="id" required autocomplete="off"></div>
<div><label for="store-name">Name</label><input type="text" id="store-name" name="name" required autocomplete="off"></div>
<div><label for="store-currency">Currency (ISO 4217, like EUR)</label><input type="text" id="store-currency" name="currency" required pattern="[A-Z]{3}" autocomplete="off"></div>
<div><button type="submit" class="primary">Create store</button></div></form>`,
  );
}

export function storePage(ctx: PageContext, store: string, keys: Row[]): string {
  return layout(
    `Keys of store ${store}`,
    [home, storeCrumb(store)],
    html`${ctx.notice}
<div class="actions"><a class="button" href="/stores/${encodeURIComponent(store)}/keys/new">Create a key</a><a class="button" href="/stores/${encodeURIComponent(store)}/events">Event log</a></div>
${table(
  `Keys of ${store}`,
  keys,
  ['id', 'name', 'abilities', 'status', 'last_used_at', 'webhook_url', 'destination', 'events'],
  {
    head: 'Open',
    cell: (k) => html`<a href="${keyPath(store, k.id)}">Key ${k.id}</a>`,
  },
)}`,
  );
}

function checkboxes(legend: string, name: string, options: readonly string[], checked: readonly string[]): Html {
  return html`<fieldset><legend>${legend}</legend>${options.map((o, i) => {
    const id = `${name}-${i}`;
    return html`<label for="${id}"><input type="checkbox" id="${id}" name="${name}" value="${o}"${checked.includes(o) ? html` checked` : ''}>${o}</label>`;
  })}</fieldset>`;
}

/**
 * A key's subscriptions with field lists (`product.updated:price,name`, docs/webhooks.md, "What
 * changed"): a text field beside the type checkboxes, posted under the same name, so the admin
 * command reads one list. A checked type without fields takes every event of it.
 */
function fieldFilters(id: string, events: readonly string[]): Html {
  const filtered = events.filter((e) => e.includes(':')).join(',');
  return html`<div><label for="${id}">Only when these fields changed (optional, type:field,field)</label><input type="text" id="${id}" name="events" value="${filtered}" placeholder="product.updated:price,quantity" autocomplete="off" aria-describedby="${id}-hint">
<p class="hint" id="${id}-hint">An event passes when it changed any of the named fields; leave its box above unchecked.</p></div>`;
}

export function newKeyPage(ctx: PageContext, store: string, once: string): string {
  return layout(
    `New key for ${store}`,
    [home, storeCrumb(store), { label: 'New key' }],
    html`${ctx.notice}
<form method="post" action="/stores/${encodeURIComponent(store)}/keys" class="stack">${csrfField(ctx.csrf)}${onceField(once)}
<div><label for="key-name">Name (who uses it, e.g. "crm")</label><input type="text" id="key-name" name="name" required autocomplete="off"></div>
${checkboxes('Abilities', 'abilities', ABILITIES, [])}
<div><label for="key-webhook">Webhook URL (optional)</label><input type="url" id="key-webhook" name="webhook_url" autocomplete="off" aria-describedby="key-webhook-hint">
<p class="hint" id="key-webhook-hint">Public https only; the local stack also takes http://127.0.0.1 receivers.</p></div>
${checkboxes('Webhook events', 'events', EVENT_TYPES, ORDER_EVENT_TYPES)}
${fieldFilters('key-event-fields', [])}
<div><button type="submit" class="primary">Create key</button></div></form>`,
  );
}

/** What a create, a rotate or a secret rotation shows once: kept between its POST and one GET. */
export interface ShownOnce {
  title: string;
  store: string;
  record: Row;
  secrets: [field: string, name: string][];
}
/** What is left of a `ShownOnce` after its one read: no secret. */
export interface ShownGone {
  title: string;
  store: string;
  keyId: unknown;
}

/** After create, rotate or a secret rotation: the record and its secrets, shown this once. */
export function shownOncePage({ title, store, record, secrets }: ShownOnce): string {
  const shown = secrets.filter(([f]) => typeof record[f] === 'string');
  return layout(
    title,
    [home, storeCrumb(store), keyCrumb(store, record), { label: title }],
    html`
${notice('done', html`${title}. <strong>Copy ${shown.map(([, n]) => n.toLowerCase()).join(' and ')} now</strong>: the console cannot show ${shown.length > 1 ? 'them' : 'it'} again.`)}
${shown.map(([f, n]) => secret(f.replace(/_/g, '-'), n, String(record[f])))}
${fieldList(
  record,
  ['id', 'name', 'abilities'],
  secrets.map(([f]) => f),
)}
<div class="actions"><a class="button" href="${keyPath(store, record.id)}">Back to key ${record.id}</a></div>`,
  );
}

/** A shown-once page asked for again (a reload, Back, an old address): its secrets are gone. */
export function shownGonePage(gone: ShownGone | undefined): string {
  const back = gone
    ? html`<a class="button" href="${keyPath(gone.store, gone.keyId)}">Back to key ${String(gone.keyId)}</a>`
    : html`<a class="button" href="/">Back to the stores</a>`;
  return layout(
    gone?.title ?? 'Shown once',
    gone ? [home, storeCrumb(gone.store), { label: gone.title }] : [home, { label: 'Shown once' }],
    html`${notice('error', html`This page was <strong>shown once</strong> and its token and secrets are gone: the console cannot show them again, and asking again created or rotated nothing. If they were not copied, rotate them on the key's page.`)}
<div class="actions">${back}</div>`,
  );
}

export const ACTIONS = {
  rotate: {
    title: 'Rotate token',
    warning: 'The current token stops working at once; integrations using it get 401 until they hold the new one.',
  },
  revoke: {
    title: 'Revoke key',
    warning:
      'The key stops working at once and for good, and its pending webhook deliveries fail. This cannot be undone.',
  },
  'rotate-webhook-secret': {
    title: 'Rotate webhook secret',
    warning:
      'Deliveries carry both signatures for 24 hours; after that only the new secret verifies. A second rotation within 24 hours drops the oldest secret.',
  },
} as const;
export type Action = keyof typeof ACTIONS;

const MCP_TEXT: Record<McpMode, string> = {
  full: 'full: every tool its abilities allow',
  'read-only': 'read-only: the read tools only, whatever its abilities',
};

/** A budget as the form takes it back: its number, or `none` for no limit. */
const perHour = (v: unknown) => (typeof v === 'number' ? String(v) : 'none');

export function keyPage(ctx: PageContext, store: string, key: Row): string {
  const path = keyPath(store, key.id);
  const events = Array.isArray(key.events) ? (key.events as string[]) : [];
  const active = key.status !== 'revoked';
  return layout(
    `Key ${key.id} (${key.name})`,
    [home, storeCrumb(store), keyCrumb(store, key)],
    html`${ctx.notice}
${fieldList(key, ['id', 'name', 'status', 'abilities', 'last_used_at', 'webhook_url', 'destination', 'aws_external_id', 'events'])}
<div class="actions"><a class="button" href="${path}/deliveries">Webhook deliveries</a><a class="button" href="${path}/requests">Recent requests</a></div>
<h2>Webhook</h2>
<form method="post" action="${path}/webhook" class="stack">${csrfField(ctx.csrf)}
<div><label for="webhook-url">Webhook URL (empty removes it)</label><input type="url" id="webhook-url" name="url" value="${String(key.webhook_url ?? '')}" autocomplete="off"></div>
${checkboxes('Events', 'events', EVENT_TYPES, events)}
${fieldFilters('webhook-event-fields', events)}
<div><button type="submit">Save webhook</button></div></form>
${active ? destinationForm(path, key, ctx.csrf) : ''}
${
  active
    ? html`<h2>MCP and write budget</h2>
<form method="post" action="${path}/mcp" class="stack">${csrfField(ctx.csrf)}
<div><label for="mcp">MCP tools</label><select id="mcp" name="mcp" required>${MCP_MODES.map((m) => html`<option value="${m}"${key.mcp === m ? html` selected` : ''}>${MCP_TEXT[m]}</option>`)}</select></div>
<div><button type="submit">Save MCP mode</button></div></form>
<form method="post" action="${path}/budget" class="stack">${csrfField(ctx.csrf)}
<div><label for="writes-per-hour">Writes per hour</label><input type="text" id="writes-per-hour" name="writes_per_hour" value="${perHour(key.writes_per_hour)}" autocomplete="off" aria-describedby="budget-hint"></div>
<div><label for="status-changes-per-hour">Status changes per hour</label><input type="text" id="status-changes-per-hour" name="status_changes_per_hour" value="${perHour(key.status_changes_per_hour)}" autocomplete="off" aria-describedby="budget-hint"></div>
<p class="hint" id="budget-hint">Each 1 to 1,000,000 an hour, or none for no limit; a field left empty keeps its value.</p>
<div><button type="submit">Save budget</button></div></form>`
    : ''
}
<h2>Irreversible actions</h2>
${
  active
    ? html`<div class="actions">${(Object.keys(ACTIONS) as Action[]).map((a) => html`<a class="button" href="${path}/confirm/${a}">${ACTIONS[a].title}…</a>`)}</div>`
    : html`<p>This key is revoked: nothing more can change.</p>`
}`,
  );
}

/**
 * The key's events to an SQS queue or an EventBridge bus in the integrator's account instead of a
 * URL (`keys set-destination`, docs/destinations.md): the role there must trust the signer with the
 * key's external id, shown beside the form so the admin can hand it over first.
 */
function destinationForm(path: string, key: Row, csrf: string): Html {
  const d = (key.destination ?? {}) as Row;
  const kind = d.kind === 'eventbridge' ? 'eventbridge' : 'sqs';
  const target = d.kind === 'sqs' ? d.queue_url : d.kind === 'eventbridge' ? d.bus_arn : '';
  return html`<h2>Destination in the integrator's AWS account</h2>
<form method="post" action="${path}/destination" class="stack">${csrfField(csrf)}
<p class="hint" id="destination-hint">Instead of the webhook URL: their role (named store-events-…) must trust the signer with this key's external id <code>${String(key.aws_external_id ?? 'none yet: run keys external-id')}</code> (docs/destinations.md). The events chosen above apply.</p>
<div><label for="destination-kind">Kind</label><select id="destination-kind" name="kind" required aria-describedby="destination-hint"><option value="sqs"${kind === 'sqs' ? html` selected` : ''}>SQS queue (a .fifo queue keeps each family in order)</option><option value="eventbridge"${kind === 'eventbridge' ? html` selected` : ''}>EventBridge bus</option></select></div>
<div><label for="destination-target">Queue URL or bus ARN</label><input type="text" id="destination-target" name="target" value="${String(target ?? '')}" required autocomplete="off"></div>
<div><label for="destination-role">Role ARN</label><input type="text" id="destination-role" name="role_arn" value="${String(d.role_arn ?? '')}" required autocomplete="off" placeholder="arn:aws:iam::123456789012:role/store-events-crm"></div>
<div><button type="submit">Save destination</button></div></form>`;
}

export function confirmPage(ctx: PageContext, store: string, key: Row, action: Action, once: string): string {
  const a = ACTIONS[action];
  const path = keyPath(store, key.id);
  return layout(
    `${a.title}: key ${key.id}?`,
    [home, storeCrumb(store), keyCrumb(store, key), { label: a.title }],
    html`${ctx.notice}
<p>${a.warning}</p>
${fieldList(key, ['id', 'name', 'status', 'abilities', 'webhook_url'])}
<div class="actions">${button(`${path}/${action}`, `Yes, ${a.title.toLowerCase()}`, ctx.csrf, { once }, action === 'revoke' ? 'danger' : 'primary')}
<a class="button" href="${path}">Cancel</a></div>`,
  );
}

export function deliveriesPage(ctx: PageContext, store: string, key: Row, rows: Row[]): string {
  const path = keyPath(store, key.id);
  return layout(
    `Deliveries of key ${key.id}`,
    [home, storeCrumb(store), keyCrumb(store, key), { label: 'Deliveries' }],
    html`${ctx.notice}
<p>Webhook URL: ${value(key.webhook_url)}${key.destination && (key.destination as Row).kind !== 'webhook' ? html` · destination ${value(key.destination)}` : ''}${key.endpoint_state !== undefined ? html` · endpoint ${value(key.endpoint_state)}` : ''}</p>
<div class="actions">${button(`${path}/ping`, 'Send a test ping', ctx.csrf)}<a class="button" href="${path}/deliveries">Refresh</a></div>
${table(
  `Deliveries of key ${key.id}, newest first`,
  rows,
  ['event_id', 'type', 'state', 'attempts', 'last_status_code', 'last_error', 'next_attempt_at', 'updated_at'],
  {
    head: 'Action',
    cell: (d) => button(`${path}/redeliver`, 'Redeliver', ctx.csrf, { event: String(d.event_id) }),
    lead: true,
  },
)}
<h2>Redeliver in bulk</h2>
<form method="post" action="${path}/redeliver-since" class="stack">${csrfField(ctx.csrf)}
<div><label for="since">Every delivery created since (UTC)</label><input type="datetime-local" id="since" name="since" required step="1"></div>
<div><label for="since-state">Only those in state</label><select id="since-state" name="state"><option value="">any state</option>${['failed', 'pending', 'delivered'].map((s) => html`<option value="${s}">${s}</option>`)}</select></div>
<p class="hint">Each starts a new round with a fresh retry schedule, oldest first, at most 500 per click.</p>
<div><button type="submit">Redeliver since</button></div></form>`,
  );
}

/** What one bulk redelivery did, for the notice above the deliveries. */
export function bulkNotice(out: { redelivered?: unknown; skipped?: unknown; next_since?: unknown }): Html {
  const n = Number(out.redelivered ?? 0);
  const skipped = Array.isArray(out.skipped) ? out.skipped.length : 0;
  return notice(
    'done',
    html`<strong>${n}</strong> ${n === 1 ? 'delivery' : 'deliveries'} redelivered${skipped ? html`; ${skipped} skipped (already being redelivered)` : ''}.${
      out.next_since ? html` More remain: redeliver again since ${value(out.next_since)}.` : ''
    }`,
  );
}

export function requestsPage(ctx: PageContext, store: string, key: Row, rows: Row[], source: unknown): string {
  return layout(
    `Requests of key ${key.id}`,
    [home, storeCrumb(store), keyCrumb(store, key), { label: 'Requests' }],
    html`${ctx.notice}
<p class="hint">Newest first, from the ${value(source)}.</p>
<div class="actions"><a class="button" href="${keyPath(store, key.id)}/requests">Refresh</a></div>
${table(`Requests made with key ${key.id}`, rows, ['time', 'method', 'path', 'status', 'error_code', 'request_id'])}`,
  );
}

/** Who caused an event, in words: a key by its id, the store's admin, or the storefront. */
const originText = (origin: unknown) => {
  const o = origin as { kind?: string; key_id?: number } | null;
  return o?.kind === 'key' ? `key ${o.key_id}` : (o?.kind ?? '');
};

/** The store's event log (`webhooks events`): every family, ascending from `after`, a page at a time. */
export function eventsPage(ctx: PageContext, store: string, rows: Row[], after: number, nextAfter: unknown): string {
  const base = `/stores/${encodeURIComponent(store)}/events`;
  const shown = rows.map((e) => ({
    sequence: e.sequence,
    type: e.type,
    timestamp: e.timestamp,
    origin: originText(e.origin),
    id: e.id,
  }));
  return layout(
    `Event log of store ${store}`,
    [home, storeCrumb(store), { label: 'Event log' }],
    html`${ctx.notice}
<p class="hint">Every change of the store, numbered in order (kept 30 days), from sequence ${String(after + 1)}. Keys see the families their abilities read (GET /events).</p>
<div class="actions"><a class="button" href="${base}?after=0">From the start</a>${typeof nextAfter === 'number' ? html`<a class="button" href="${base}?after=${String(nextAfter)}">Next page</a>` : ''}</div>
${table(`Events of ${store}`, shown, ['sequence', 'type', 'timestamp', 'origin', 'id'], {
  head: 'Action',
  cell: (e) => button(`${base}/replay`, 'Replay', ctx.csrf, { event: String(e.id), after: String(after) }),
  lead: true,
})}
<p class="hint">Replay fans an event out again (kept 7 days for this): a key subscribed to it that never got it gets it now; a key that has it gets nothing twice.</p>`,
  );
}

export function forbiddenPage(): string {
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Forbidden</title></head><body><main><h1>Forbidden</h1><p>Open the address the console printed when it started (it carries the one-time secret), on 127.0.0.1 or localhost.</p></main></body></html>';
}
