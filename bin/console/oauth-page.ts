import { MCP_MODES } from '#domain/key/api-key.ts';
import { button, fieldList, html, layout, table, type Html } from './html.ts';
import type { PageContext } from './pages.ts';

/** Who asks and who opened the page, as `oauth show` and `oauth requests` carry it (shared/app/oauth/decisions.ts `requestView`). */
interface RequestView {
  client_id: string;
  client_name: string;
  name_verified: boolean;
  name_verified_by: string | null;
  redirect_host: string;
  abilities: string[];
  ip: string | null;
  user_agent: string | null;
  age_seconds: number;
  [field: string]: unknown;
}

/** What `oauth show` answers about an approval code. */
export interface ShownRequest extends RequestView {
  approval_code: string;
  status: string;
}

/** What `oauth requests` lists of each request still waiting: no approval code. */
export type WaitingRequest = RequestView;

const field = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

/** Whose word the name is: the host serving the client's metadata document, or the caller's own. */
const nameSource = (r: RequestView) =>
  r.name_verified_by !== null
    ? `verified: published by ${r.name_verified_by}`
    : 'unverified: self-registered, anyone can register this name';

/**
 * The store admin's side of an OAuth authorization (docs/oauth.md#approving-safely): the approval
 * code the user reads out from the app's page on their own screen, then who asks (the name and
 * whether anyone vouches for it, the client_id), who opened the page (IP, User-Agent, how long
 * ago) and for what, and the choice of store, abilities (only those asked), MCP mode and write
 * budget; approving and denying are `oauth approve` and `oauth deny`, each form good for one submit
 * (`once`, bin/console/once.ts). Without a code, the requests still waiting, newest first (`oauth
 * requests`), as an overview only: the list carries no codes and no way to decide, since anyone can
 * start a request that looks exactly like a real app's.
 */
export function oauthPage(
  ctx: PageContext,
  code: string,
  request: ShownRequest | undefined,
  once: { approve: string; deny: string },
  waiting?: WaitingRequest[],
): string {
  return layout(
    'Approve an app',
    [{ label: 'Stores', href: '/' }, { label: 'Approve an app' }],
    html`${ctx.notice}
<form method="get" action="/oauth" class="stack"><label for="approval-code">Approval code (ask the user to read it out from the app's page on their own screen)</label>
<input type="text" id="approval-code" name="code" value="${code}" required autocomplete="off" autocapitalize="characters" spellcheck="false">
<div><button type="submit">Look up</button></div></form>
${request ? decision(ctx, request, once) : ''}${waiting ? waitingList(waiting) : ''}`,
  );
}

/** What both views show of a request: the app, who names it, where it sends the user, what it asks for, and who asked. */
const overview = (r: RequestView) => ({
  app: r.client_name,
  name: nameSource(r),
  client_id: r.client_id,
  redirect_host: r.redirect_host,
  asks_for: r.abilities,
  ip: r.ip,
  user_agent: r.user_agent,
  age_seconds: r.age_seconds,
});

function waitingList(rows: WaitingRequest[]): Html {
  const shown = rows.map(overview);
  return html`<h2>Waiting for a decision</h2>
<p class="hint">Who is asking right now, for an overview. Anyone can start a request under any app's name, so this list shows no approval codes: approve only the code the user reads out to you from their own screen.</p>
${table('Requests waiting for a decision, newest first', shown, [])}`;
}

function decision(ctx: PageContext, r: ShownRequest, once: { approve: string; deny: string }): Html {
  const summary = fieldList({ ...overview(r), status: r.status, expires_at: r.expires_at }, [
    'app',
    'name',
    'client_id',
    'redirect_host',
    'asks_for',
    'ip',
    'user_agent',
    'age_seconds',
    'status',
    'expires_at',
  ]);
  if (r.status !== 'pending')
    return html`<h2>Request ${r.approval_code}</h2>${summary}<p>This request is ${r.status}: there is nothing left to decide.</p>`;
  return html`<h2>Request ${r.approval_code}</h2>${summary}
<p class="hint">Approve only if the user read this code out to you from their own screen just now, and the IP and User-Agent are theirs. Approving creates a key of the chosen store named "oauth: ${r.client_name}" when the app picks it up, revocable on its page.</p>
<form method="post" action="/oauth/approve" class="stack">${field('csrf', ctx.csrf)}${field('once', once.approve)}${field('code', r.approval_code)}
<div><label for="oauth-store">Store id</label><input type="text" id="oauth-store" name="store" required pattern="[a-z0-9][a-z0-9-]{0,62}" autocomplete="off"></div>
<fieldset><legend>Abilities (at most what the app asked for)</legend>${r.abilities.map(
    (a, i) =>
      html`<label for="oauth-ability-${String(i)}"><input type="checkbox" id="oauth-ability-${String(i)}" name="abilities" value="${a}" checked>${a}</label>`,
  )}</fieldset>
<div><label for="oauth-mcp">MCP tools</label><select id="oauth-mcp" name="mcp">${MCP_MODES.map((m) => html`<option value="${m}">${m}</option>`)}</select></div>
<div><label for="oauth-writes">Writes per hour (empty: no limit)</label><input type="text" id="oauth-writes" name="writes_per_hour" value="" inputmode="numeric" autocomplete="off"></div>
<div><button type="submit" class="primary">Approve</button></div></form>
<div class="actions">${button('/oauth/deny', 'Deny', ctx.csrf, { once: once.deny, code: r.approval_code }, 'danger')}</div>`;
}
