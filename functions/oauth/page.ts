import type { PendingRequest } from '#app/oauth/authorize.ts';

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const layout = (title: string, body: string, script = '') => `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}
code.approval{font-size:2rem;letter-spacing:.2rem}</style></head>
<body>${body}${script}</body>
</html>
`;

/**
 * The waiting page: who asks, for what, and the approval code the store admin approves. It can
 * grant nothing itself; it polls until the admin decides and then follows the redirect. The code
 * goes from this screen to the admin by the user (docs/oauth.md#approving-safely): no list the admin
 * sees shows it.
 */
export function waitingPage(request: PendingRequest, handle: string, redirectHost: string): string {
  // Relative to /oauth/authorize, so it keeps the stage prefix of an execute-api URL.
  const statusUrl = `authorize/status?request=${encodeURIComponent(handle)}`;
  return layout(
    'Waiting for the store admin',
    `<h1>${escapeHtml(request.client_name)} asks to use your store</h1>
<p>It will return to <strong>${escapeHtml(redirectHost)}</strong> and asks for:</p>
<ul>${request.abilities.map((a) => `<li><code>${escapeHtml(a)}</code></li>`).join('')}</ul>
<p>Read this code out to the store admin yourself: they approve your request by this code, and by nothing else.</p>
<p><code class="approval" id="approval-code" data-request="${escapeHtml(handle)}">${escapeHtml(request.approval_code)}</code></p>
<p id="status">Waiting for the decision…</p>`,
    `<script>
(async function poll() {
  const res = await fetch(${JSON.stringify(statusUrl)}, { headers: { accept: 'application/json' } });
  const body = await res.json().catch(() => ({}));
  if (body.status === 'done') {
    // An app's own scheme (cursor://…) hands the URL to the app and leaves this page open: say so.
    document.getElementById('status').textContent = 'Decided: returning to the app. You can close this page.';
    location.href = body.redirect;
    return;
  }
  if (body.status === 'unknown') { document.getElementById('status').textContent = 'This request is no longer valid.'; return; }
  setTimeout(poll, 2000);
})();
</script>`,
  );
}

export const refusedPage = (message: string) =>
  layout('Authorization refused', `<h1>This authorization request cannot continue</h1><p>${escapeHtml(message)}</p>`);
