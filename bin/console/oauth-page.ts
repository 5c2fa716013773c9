import { MCP_MODES } from '#domain/key/api-key.ts';
import { button, fieldList, html, layout, table, type Html } from './html.ts';
import type { PageContext } from './pages.ts';

/** What `oauth show` answers about an approval code (shared/app/oauth.ts `showAuthorization`). */
export interface ShownRequest {
  approval_code: string;
  client_name: string;
  redirect_host: string;
  abilities: string[];
  status: string;
  [field: string]: unknown;
}

/** What `oauth requests` lists of each request still waiting (shared/app/oauth.ts `listAuthorizationRequests`). */
export interface WaitingRequest {
  approval_code: string;
  client_name: string;
  redirect_host: string;
  abilities: string[];
  age_seconds: number;
  [field: string]: unknown;
}

const field = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`;

/**
 * The store admin's side of an OAuth authorization (docs/oauth.md#the-flow): the approval code the
 * client's page shows, then who asks and for what, and the choice of store, abilities (only those
 * asked), MCP mode and write budget; approving and denying are `oauth approve` and `oauth deny`,
 * each form good for one submit (`once`, bin/console/once.ts). Without a code, the requests still
 * waiting, newest first (`oauth requests`), for an admin who did not get the code from the user.
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
<form method="get" action="/oauth" class="stack"><label for="approval-code">Approval code (shown on the app's page)</label>
<input type="text" id="approval-code" name="code" value="${code}" required autocomplete="off" autocapitalize="characters" spellcheck="false">
<div><button type="submit">Look up</button></div></form>
${request ? decision(ctx, request, once) : ''}${waiting ? waitingList(waiting) : ''}`,
  );
}

function waitingList(rows: WaitingRequest[]): Html {
  const shown = rows.map((r) => ({
    approval_code: r.approval_code,
    app: r.client_name,
    redirect_host: r.redirect_host,
    asks_for: r.abilities,
    age_seconds: r.age_seconds,
  }));
  return html`<h2>Waiting for a decision</h2>${table('Requests waiting for a decision, newest first', shown, [], {
    head: 'Decide',
    lead: true,
    cell: (r) =>
      html`<a href="/oauth?code=${encodeURIComponent(String(r.approval_code))}">Decide ${String(r.approval_code)}</a>`,
  })}`;
}

function decision(ctx: PageContext, r: ShownRequest, once: { approve: string; deny: string }): Html {
  const summary = fieldList(
    {
      app: r.client_name,
      redirect_host: r.redirect_host,
      asks_for: r.abilities,
      status: r.status,
      expires_at: r.expires_at,
    },
    ['app', 'redirect_host', 'asks_for', 'status', 'expires_at'],
  );
  if (r.status !== 'pending')
    return html`<h2>Request ${r.approval_code}</h2>${summary}<p>This request is ${r.status}: there is nothing left to decide.</p>`;
  return html`<h2>Request ${r.approval_code}</h2>${summary}
<p class="hint">Approving creates a key of the chosen store named "oauth: ${r.client_name}", revocable on its page. Check the redirect host: the app's code goes there.</p>
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
