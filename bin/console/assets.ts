/**
 * The console's only two static files, served from memory: no CDN, no font, no request leaves
 * the machine. The script only copies secrets; every page works without it.
 */
export const CSS = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b57d0; --bad: #b3261e; --good: #146c2e; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: #fff; }
header { display: flex; flex-wrap: wrap; gap: .25rem 1.5rem; align-items: baseline; padding: .75rem 1rem; border-bottom: 1px solid var(--line); background: #f6f8fa; }
.brand { margin: 0; font-weight: 600; }
nav ol { display: flex; flex-wrap: wrap; gap: .25rem; margin: 0; padding: 0; list-style: none; }
nav li + li::before { content: "/"; margin-right: .25rem; color: var(--muted); }
main { max-width: 72rem; padding: 1rem; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid #f9a825; outline-offset: 2px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: .5rem; background: #fff; padding: .25rem .5rem; z-index: 1; }
.scroll { overflow-x: auto; max-width: 100%; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
caption { text-align: left; padding: .5rem; font-weight: 600; }
th, td { text-align: left; vertical-align: top; padding: .4rem .5rem; border-top: 1px solid var(--line); }
th { background: #f6f8fa; white-space: nowrap; }
td code.json { font-size: .8rem; word-break: break-all; }
.none { color: var(--muted); }
dl.fields { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: .5rem 1rem; margin: 0; }
dl.fields dt { font-size: .8rem; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
dl.fields dd { margin: 0; overflow-wrap: anywhere; }
form.stack { display: grid; gap: .75rem; max-width: 36rem; }
form.stack + form.stack { margin-top: 1.5rem; }
form.inline { display: inline; }
fieldset { border: 1px solid var(--line); border-radius: 6px; }
legend { font-weight: 600; }
label { display: block; }
fieldset label { display: flex; gap: .5rem; align-items: center; font-family: ui-monospace, monospace; font-size: .9rem; }
input[type=text], input[type=url], input[type=datetime-local], select { width: 100%; padding: .4rem; font: inherit; border: 1px solid #8c959f; border-radius: 4px; }
button, .button { font: inherit; padding: .35rem .8rem; border-radius: 4px; border: 1px solid #8c959f; background: #f6f8fa; color: var(--ink); cursor: pointer; text-decoration: none; display: inline-block; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { background: var(--bad); border-color: var(--bad); color: #fff; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; margin: .75rem 0; }
.notice { padding: .75rem 1rem; border-radius: 6px; margin: 0 0 1rem; overflow-wrap: anywhere; }
.notice.error { background: #fdecea; border: 1px solid var(--bad); }
.notice.done { background: #e6f4ea; border: 1px solid var(--good); }
.secret { border: 2px solid #f9a825; border-radius: 6px; padding: .5rem 1rem; margin: 1rem 0; background: #fffbea; }
code.token { font-size: .95rem; word-break: break-all; }
.hint { color: var(--muted); font-size: .9rem; }
.live { position: absolute; left: -999px; }
`;

export const JS = `
document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const live = document.getElementById('live');
  try {
    await navigator.clipboard.writeText(source.textContent);
    live.textContent = 'Copied to the clipboard.';
    button.textContent = 'Copied';
  } catch {
    // No clipboard permission: select the text so that Ctrl+C copies it.
    const range = document.createRange();
    range.selectNodeContents(source);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    live.textContent = 'Selected: press Ctrl+C (or Cmd+C) to copy.';
  }
});
`;

/** Named by every page, so the browser asks for no /favicon.ico (a 404 in its console). */
export const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#0b57d0"/><path d="M4 11V5h3a2 2 0 0 1 0 4H4m5 2 3-6" stroke="#fff" stroke-width="1.5" fill="none"/></svg>';
