import type { AdminEvent, AdminResult } from '#functions/admin/handler.ts';
import { errorNotice, layout, notice, html, value } from './html.ts';
import {
  ACTIONS,
  bulkNotice,
  confirmPage,
  deliveriesPage,
  keyPage,
  keyPath,
  newKeyPage,
  requestsPage,
  eventsPage,
  shownGonePage,
  shownOncePage,
  storePage,
  storesPage,
  type Action,
  type PageContext,
  type ShownGone,
  type ShownOnce,
} from './pages.ts';
import { OneTime } from './once.ts';
import { oauthPage, type ShownRequest, type WaitingRequest } from './oauth-page.ts';
import { badAddressPage, isKeyId, notFoundPage, segments } from './address.ts';

/** One console request after the security checks of server.ts: which admin command, which page. */
export interface ConsoleRequest {
  method: 'GET' | 'POST';
  path: string;
  query: URLSearchParams;
  form: URLSearchParams | undefined;
}
export type Answer = { status: number; body: string } | { redirect: string };
type Row = Record<string, unknown>;
interface Deps {
  csrf: string;
  invoke: (event: AdminEvent) => Promise<AdminResult>;
  once: ConsoleOnce;
}

/** The console's form tokens and shown-once slots (bin/console/once.ts), one per running console. */
export type ConsoleOnce = OneTime<Answer, ShownOnce, ShownGone>;
export const consoleOnce = (): ConsoleOnce =>
  new OneTime<Answer, ShownOnce, ShownGone>(({ title, store, record }) => ({ title, store, keyId: record.id }));
type Failure = Extract<AdminResult, { ok: false }>['error'];

const FORM_USED =
  'This form was already sent, or is too old (a form works for an hour, and until the console restarts): nothing was done. Check the key, then try again.';

/** What a redirect's `done` says; a fixed list, so the query string cannot put words on the page. */
const DONE: Record<string, string> = {
  store: 'Store created.',
  webhook: 'Webhook saved.',
  destination: 'Destination saved: the next events go to the queue or bus.',
  mcp: 'MCP mode saved.',
  budget: 'Budget saved.',
  revoke: 'Key revoked.',
  redeliver: 'Redelivery queued: a new round with a fresh retry schedule.',
  approved: "Approved: the app's page receives its code on its next poll.",
  denied: "Denied: the app's page sends it back with access_denied.",
};

const STATUS: Record<string, number> = {
  not_found: 404,
  validation_failed: 422,
  invalid_transition: 409,
  conflict: 409,
  unreachable: 502,
  internal_error: 500,
};
const statusOf = (e: Failure) => STATUS[e.code] ?? 400;

class Refused extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message);
  }
}

export async function route(req: ConsoleRequest, deps: Deps): Promise<Answer> {
  const run = async <T = Row>(command: string, args: Row = {}): Promise<T> => {
    const out = await deps.invoke({ command, args });
    if (!out.ok) throw new Refused(out.error);
    return out.data as T;
  };
  const done = req.query.get('done');
  const ctx: PageContext = { csrf: deps.csrf, notice: done && DONE[done] ? notice('done', DONE[done]!) : undefined };
  const page = (body: string, status = 200): Answer => ({ status, body });
  const fail = (e: Failure, body: (c: PageContext) => string) =>
    page(body({ ...ctx, notice: errorNotice(e) }), statusOf(e));
  const parts = segments(req.path);
  if (!parts) return page(badAddressPage(), 400);
  const f = (name: string) => req.form?.get(name) ?? '';
  /** Where a POST that made secrets sends the browser: a page that shows them to one GET. */
  const showOnce = (shown: ShownOnce): Answer => ({ redirect: `/shown/${deps.once.put(shown)}` });
  /** Runs a form's action for its first submit only; `used` is the page for a token that is not live. */
  const onceOnly = async (action: () => Promise<Answer>, used: (c: PageContext) => string): Promise<Answer> =>
    (await deps.once.once(f('once'), action)) ?? page(used({ ...ctx, notice: notice('error', FORM_USED) }), 409);

  try {
    if (parts.length === 0) return page(storesPage(ctx, (await run<{ data: Row[] }>('stores list')).data));
    if (parts[0] === 'open' && parts.length === 1)
      return { redirect: `/stores/${encodeURIComponent(req.query.get('store') ?? '')}` };
    if (parts[0] === 'shown' && parts.length === 2 && req.method === 'GET') {
      const taken = deps.once.take(parts[1]!);
      if (taken.kind === 'shown') return page(shownOncePage(taken.shown));
      return page(shownGonePage(taken.kind === 'gone' ? taken.gone : undefined), 410);
    }
    if (parts[0] === 'oauth') {
      // An OAuth client's approval code (docs/oauth.md#the-flow): `oauth requests` without a code, `oauth show`,
      // then `oauth approve` or `oauth deny`.
      const code = (req.method === 'POST' ? f('code') : (req.query.get('code') ?? '')).trim();
      const tokens = () => ({ approve: deps.once.issue(), deny: deps.once.issue() });
      const show = async (c: PageContext, status = 200): Promise<Answer> => {
        if (!code)
          return page(
            oauthPage(c, code, undefined, tokens(), (await run<{ data: WaitingRequest[] }>('oauth requests')).data),
            status,
          );
        try {
          return page(oauthPage(c, code, await run<ShownRequest>('oauth show', { code }), tokens()), status);
        } catch (err) {
          if (!(err instanceof Refused)) throw err;
          return fail(err.failure, (e) => oauthPage(e, code, undefined, tokens()));
        }
      };
      if (parts.length === 1 && req.method === 'GET') return await show(ctx);
      const verb = parts[1];
      if (parts.length !== 2 || req.method !== 'POST' || (verb !== 'approve' && verb !== 'deny')) return notFound();
      const writes = f('writes_per_hour').trim();
      const args =
        verb === 'approve'
          ? {
              code,
              store: f('store'),
              abilities: req.form!.getAll('abilities').join(','),
              mcp: f('mcp'),
              ...(writes ? { writes_per_hour: writes } : {}),
            }
          : { code };
      try {
        return await onceOnly(
          async () => {
            await run(`oauth ${verb}`, args);
            return {
              redirect: `/oauth?code=${encodeURIComponent(code)}&done=${verb === 'approve' ? 'approved' : 'denied'}`,
            };
          },
          (c) => oauthPage(c, code, undefined, tokens()),
        );
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        const failure = err.failure;
        return { ...(await show({ ...ctx, notice: errorNotice(failure) })), status: statusOf(failure) };
      }
    }
    if (parts[0] !== 'stores') return notFound();
    const store = parts[1];
    if (store === undefined) {
      if (req.method !== 'POST') return { redirect: '/' };
      try {
        const created = await run('stores create', { id: f('id'), name: f('name'), currency: f('currency') });
        return { redirect: `/stores/${encodeURIComponent(String(created.id))}?done=store` };
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        return fail(err.failure, (c) => storesPage(c, []));
      }
    }
    const keysOf = async () => (await run<{ data: Row[] }>('keys list', { store })).data;
    if (parts.length === 2) return page(storePage(ctx, store, await keysOf()));
    if (parts[2] === 'events' && parts[3] === 'replay' && parts.length === 4 && req.method === 'POST') {
      const after = Number(f('after')) || 0;
      const logPage = async (c: PageContext) => {
        const log = await run<{ data: Row[]; next_after: number | null }>('webhooks events', {
          store,
          after,
          limit: 50,
        });
        return page(eventsPage(c, store, log.data, after, log.next_after));
      };
      try {
        const out = await run('webhooks replay', { store, event: f('event') });
        return await logPage({
          ...ctx,
          notice: notice(
            'done',
            html`Event ${String(out.event_id)} fanned out again at ${value(out.replayed_at)}: a key subscribed to it that never got it gets it now.`,
          ),
        });
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        const failure = err.failure;
        return { ...(await logPage({ ...ctx, notice: errorNotice(failure) })), status: statusOf(failure) };
      }
    }
    if (parts[2] === 'events' && parts.length === 3) {
      const after = req.query.get('after') ?? '0';
      try {
        const log = await run<{ data: Row[]; next_after: number | null }>('webhooks events', {
          store,
          after,
          limit: 50,
        });
        return page(eventsPage(ctx, store, log.data, Number(after), log.next_after));
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        return fail(err.failure, (c) => eventsPage(c, store, [], 0, null));
      }
    }
    if (parts[2] !== 'keys') return notFound();
    const keyForm = (c: PageContext) => newKeyPage(c, store, deps.once.issue());
    if (parts.length === 3 && req.method === 'POST') {
      const args = {
        store,
        name: f('name'),
        abilities: req.form!.getAll('abilities').join(','),
        events: req.form!.getAll('events').join(','),
        webhook_url: f('webhook_url'),
      };
      const secrets: ShownOnce['secrets'] = [
        ['token', 'Token'],
        ['webhook_secret', 'Webhook secret'],
      ];
      try {
        return await onceOnly(
          async () => showOnce({ title: 'Key created', store, record: await run('keys create', args), secrets }),
          keyForm,
        );
      } catch (err) {
        if (!(err instanceof Refused)) throw err;
        return fail(err.failure, keyForm);
      }
    }
    if (parts[3] === undefined) return { redirect: `/stores/${encodeURIComponent(store)}` };
    if (parts[3] === 'new' && parts.length === 4) return page(keyForm(ctx));

    if (!isKeyId(parts[3])) return notFound(`Key ${parts[3]} is not a key of store ${store}.`);
    const id = Number(parts[3]);
    const key = (await keysOf()).find((k) => k.id === id);
    if (!key) return notFound(`Key ${parts[3]} is not a key of store ${store}.`);
    const path = keyPath(store, id);
    const sub = parts.slice(4).join('/');

    if (req.method === 'GET') {
      if (sub === '') return page(keyPage(ctx, store, key));
      if (sub.startsWith('confirm/') && sub.slice(8) in ACTIONS)
        return page(confirmPage(ctx, store, key, sub.slice(8) as Action, deps.once.issue()));
      if (sub === 'deliveries')
        return page(deliveriesPage(ctx, store, key, (await run<{ data: Row[] }>('webhooks deliveries', { id })).data));
      if (sub === 'requests') {
        const out = await run<{ data: Row[]; source?: string }>('keys requests', { id });
        return page(requestsPage(ctx, store, key, out.data, out.source ?? 'request log'));
      }
      return notFound();
    }

    // POST: each is one admin command; a refusal is shown on the page it came from.
    const onKeyPage = (e: Failure) => fail(e, (c) => keyPage(c, store, key));
    const onDeliveries = async (e: Failure) => fail(e, (c) => deliveriesPage(c, store, key, []));
    try {
      switch (sub) {
        case 'webhook': {
          const events = req.form?.getAll('events') ?? [];
          // An empty URL removes the webhook; it leaves a queue or bus alone (that form is below).
          const elsewhere =
            (key.destination as Row | null)?.kind !== undefined && (key.destination as Row).kind !== 'webhook';
          const url = f('url') === '' && elsewhere ? {} : { url: f('url') };
          await run('keys set-webhook', { id, ...url, events: events.join(',') });
          return { redirect: `${path}?done=webhook` };
        }
        case 'destination': {
          const target =
            f('kind') === 'eventbridge' ? { eventbridge_bus_arn: f('target') } : { sqs_queue_url: f('target') };
          await run('keys set-destination', { id, ...target, role_arn: f('role_arn') });
          return { redirect: `${path}?done=destination` };
        }
        case 'mcp':
          await run('keys set-mcp', { id, mcp: f('mcp') });
          return { redirect: `${path}?done=mcp` };
        case 'budget': {
          // An empty field is one the admin left alone: the command keeps its value.
          const given = (name: string) => (f(name).trim() ? { [name]: f(name).trim() } : {});
          await run('keys set-budget', { id, ...given('writes_per_hour'), ...given('status_changes_per_hour') });
          return { redirect: `${path}?done=budget` };
        }
        // The confirmed actions run once per confirmation page, however often its button is sent.
        case 'rotate':
          return await onceOnly(
            async () =>
              showOnce({
                title: 'Token rotated',
                store,
                record: await run('keys rotate', { id }),
                secrets: [['token', 'Token']],
              }),
            (c) => keyPage(c, store, key),
          );
        case 'rotate-webhook-secret':
          return await onceOnly(
            async () =>
              showOnce({
                title: 'Webhook secret rotated',
                store,
                record: await run('keys rotate-webhook-secret', { id }),
                secrets: [['webhook_secret', 'Webhook secret']],
              }),
            (c) => keyPage(c, store, key),
          );
        case 'revoke':
          return await onceOnly(
            async () => {
              await run('keys revoke', { id });
              return { redirect: `${path}?done=revoke` };
            },
            (c) => keyPage(c, store, key),
          );
        case 'redeliver':
          await run('webhooks redeliver', { id, event: f('event') });
          return { redirect: `${path}/deliveries?done=redeliver` };
        case 'redeliver-since': {
          // datetime-local sends no zone; the form says UTC. An empty state is "any".
          const since = f('since') && !/(Z|[+-]\d\d:?\d\d)$/.test(f('since')) ? `${f('since')}Z` : f('since');
          const out = await run('webhooks redeliver', { id, since, ...(f('state') ? { state: f('state') } : {}) });
          const rows = (await run<{ data: Row[] }>('webhooks deliveries', { id })).data;
          return page(deliveriesPage({ ...ctx, notice: bulkNotice(out) }, store, key, rows));
        }
        case 'ping': {
          const ping = await run('webhooks ping', { id });
          const text = html`Ping to ${String(ping.url)}: ${ping.status === null ? 'no answer' : html`HTTP <strong>${String(ping.status)}</strong>`} in <strong>${String(ping.ms)} ms</strong>${ping.error ? html` (${String(ping.error)})` : ''}.`;
          const rows = (await run<{ data: Row[] }>('webhooks deliveries', { id })).data;
          return page(
            deliveriesPage({ ...ctx, notice: notice(ping.delivered ? 'done' : 'error', text) }, store, key, rows),
          );
        }
        default:
          return notFound();
      }
    } catch (err) {
      if (!(err instanceof Refused)) throw err;
      if (sub === 'ping' || sub.startsWith('redeliver')) return onDeliveries(err.failure);
      return onKeyPage(err.failure);
    }
  } catch (err) {
    if (!(err instanceof Refused)) throw err;
    return fail(err.failure, (c) =>
      layout(
        'Not available',
        [{ label: 'Stores', href: '/' }, { label: 'Error' }],
        html`${c.notice}<p><a href="/">Back to the stores</a></p>`,
      ),
    );
  }

  function notFound(text?: string): Answer {
    return page(notFoundPage(text), 404);
  }
}
