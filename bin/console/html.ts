/**
 * The console's HTML: tagged-template strings escaped by default, one layout, and a generic
 * table and field list that show whatever fields the admin handler's JSON carries (a field the
 * handler adds later appears without a change here).
 */
export class Html {
  constructor(readonly text: string) {}
  toString() {
    return this.text;
  }
}

export const escape = (value: unknown) =>
  String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

/** `html\`<p>${x}</p>\``: interpolations are escaped unless they are Html (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  const part = (v: unknown): string =>
    v instanceof Html ? v.text : Array.isArray(v) ? v.map(part).join('') : v === false || v == null ? '' : escape(v);
  return new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? part(values[i]) : ''), ''));
}

export interface Crumb {
  label: string;
  href?: string;
}

export function layout(title: string, crumbs: Crumb[], body: Html): string {
  return `<!doctype html>${html`<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · store admin console</title>
<link rel="icon" href="/assets/icon.svg"><link rel="stylesheet" href="/assets/console.css"><script src="/assets/console.js" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header><p class="brand"><a href="/">Store admin console</a></p>
<nav aria-label="Breadcrumb"><ol>${crumbs.map((c, i) =>
    i === crumbs.length - 1
      ? html`<li><a href="${c.href ?? '#main'}" aria-current="page">${c.label}</a></li>`
      : html`<li><a href="${c.href}">${c.label}</a></li>`,
  )}</ol></nav></header>
<main id="main" tabindex="-1"><h1>${title}</h1>${body}</main>
<p class="live" role="status" aria-live="polite" id="live"></p>
</body></html>`}`;
}

/** A notice: `alert` for a refused action (read out at once), `status` for a done one. */
export function notice(kind: 'error' | 'done', text: Html | string): Html {
  return kind === 'error'
    ? html`<div class="notice error" role="alert">${text}</div>`
    : html`<div class="notice done" role="status">${text}</div>`;
}

export function errorNotice(error: { code: string; message: string; field: string | null }): Html {
  return notice(
    'error',
    html`<strong>${error.code}</strong>: ${error.message}${error.field ? html` (field <code>${error.field}</code>)` : ''}`,
  );
}

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** One value of the handler's JSON, readable: times as <time>, lists joined, objects as JSON. */
export function value(v: unknown): Html {
  if (v === null || v === undefined || v === '') return html`<span class="none">—</span>`;
  if (typeof v === 'string' && TIME.test(v))
    return html`<time datetime="${v}">${v.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
  if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) return html`${v.join(', ')}`;
  if (typeof v === 'object') return html`<code class="json">${JSON.stringify(v)}</code>`;
  return html`${String(v)}`;
}

const label = (field: string) => field.replace(/_/g, ' ');

/** Every field of `record`, `first` in that order, then the rest as they come. */
export function fieldList(record: Record<string, unknown>, first: string[] = [], skip: string[] = []): Html {
  const names = [...first.filter((f) => f in record), ...Object.keys(record).filter((f) => !first.includes(f))].filter(
    (f) => !skip.includes(f),
  );
  return html`<dl class="fields">${names.map((f) => html`<div><dt>${label(f)}</dt><dd>${value(record[f])}</dd></div>`)}</dl>`;
}

/**
 * A table of `rows` with the `first` columns in that order and then any other field a row has;
 * `extra` adds cells (links, buttons) at the end, or with `lead` as the first column: a row's action
 * must not sit past the right edge of a wide table. Wrapped in a focusable scrolling region, so a
 * wide table scrolls on a phone instead of widening the page.
 */
export function table(
  caption: string,
  rows: Record<string, unknown>[],
  first: string[],
  extra?: { head: string; cell: (row: Record<string, unknown>) => Html; lead?: boolean },
): Html {
  if (rows.length === 0) return html`<p class="empty">${caption}: none yet.</p>`;
  const seen = new Set(first.filter((f) => rows.some((r) => f in r)));
  for (const r of rows) for (const f of Object.keys(r)) seen.add(f);
  const columns = [...seen];
  return html`<div class="scroll" role="region" aria-label="${caption}" tabindex="0"><table>
<caption>${caption}</caption>
<thead><tr>${extra?.lead ? html`<th scope="col">${extra.head}</th>` : ''}${columns.map((c) => html`<th scope="col">${label(c)}</th>`)}${extra && !extra.lead ? html`<th scope="col">${extra.head}</th>` : ''}</tr></thead>
<tbody>${rows.map((r) => html`<tr>${extra?.lead ? html`<td>${extra.cell(r)}</td>` : ''}${columns.map((c) => html`<td>${value(r[c])}</td>`)}${extra && !extra.lead ? html`<td>${extra.cell(r)}</td>` : ''}</tr>`)}</tbody>
</table></div>`;
}

/** A one-button POST form (an action on a row or a page); `csrf` is the console's form token. */
export function button(
  action: string,
  text: string,
  csrf: string,
  fields: Record<string, string> = {},
  kind = '',
): Html {
  return html`<form method="post" action="${action}" class="inline"><input type="hidden" name="csrf" value="${csrf}">${Object.entries(
    fields,
  ).map(
    ([n, v]) => html`<input type="hidden" name="${n}" value="${v}">`,
  )}<button type="submit" class="${kind}">${text}</button></form>`;
}

/** A secret shown once, with a copy button (bin/console/assets.ts). */
export function secret(id: string, name: string, text: string): Html {
  return html`<div class="secret"><p><strong id="${id}-label">${name}</strong></p>
<p><code id="${id}" class="token">${text}</code></p>
<button type="button" data-copy="${id}" aria-describedby="${id}-label">Copy ${name.toLowerCase()}</button></div>`;
}
