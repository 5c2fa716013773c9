/**
 * `npm run admin -- console`: a web console on 127.0.0.1 for keys, webhooks and their deliveries.
 * Every action is one admin command through the same invoker as the CLI (bin/admin-invoke.ts):
 * in-process against the local stack, or the deployed admin Lambda with --function. Nothing in
 * AWS changes: the console is a local process of the operator's. Security model: docs/console.md.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AdminEvent, AdminResult } from '#functions/admin/handler.ts';
import type { AdminInvoker } from '../admin-invoke.ts';
import { CSS, ICON, JS } from './assets.ts';
import { forbiddenPage } from './pages.ts';
import { consoleOnce, route } from './routes.ts';

export interface ConsoleOptions {
  invoke: AdminInvoker;
  /** 0 (default) picks a free port. */
  port?: number;
}

export interface RunningConsole {
  origin: string;
  /** The address to open: it carries the secret and sets the session cookie. */
  loginUrl: string;
  close(): Promise<void>;
}

const COOKIE = 'console_session';
const FORM_LIMIT = 64 * 1024;
const HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  // Not no-referrer: under it Chromium sends `Origin: null` with the console's own forms.
  'Referrer-Policy': 'same-origin',
  'Cache-Control': 'no-store',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=');
  }
  return undefined;
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > FORM_LIMIT) return undefined;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const secret = randomBytes(24).toString('base64url');
  // The cookie holds a value derived from the secret, and every form a token derived from it:
  // neither is the secret itself, and none of them outlives this process.
  const session = createHmac('sha256', secret).update('session').digest('base64url');
  const csrf = createHmac('sha256', secret).update('form').digest('base64url');
  const once = consoleOnce();
  let port = 0;
  const allowedHosts = () => [`127.0.0.1:${port}`, `localhost:${port}`];

  const send = (
    res: ServerResponse,
    status: number,
    body: string,
    type = 'text/html; charset=utf-8',
    extra: Record<string, string> = {},
  ) => {
    res.writeHead(status, { ...HEADERS, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body), ...extra });
    res.end(body);
  };
  const forbid = (res: ServerResponse) => send(res, 403, forbiddenPage());

  const invoke = async (event: AdminEvent): Promise<AdminResult> => {
    try {
      return await options.invoke(event);
    } catch (err) {
      return { ok: false, error: { code: 'unreachable', message: (err as Error).message || String(err), field: null } };
    }
  };

  const server = createServer((req, res) => {
    void (async () => {
      // DNS rebinding: a foreign name resolving to 127.0.0.1 still sends its own Host.
      if (!allowedHosts().includes(req.headers.host ?? '')) return forbid(res);
      // Cross-site requests: a browser names the page's origin; only our own is accepted.
      const origin = req.headers.origin;
      if (origin !== undefined && !allowedHosts().some((h) => origin === `http://${h}`)) return forbid(res);
      if (req.headers['sec-fetch-site'] === 'cross-site') return forbid(res);
      if (!URL.canParse(req.url ?? '/', `http://${req.headers.host}`))
        return send(res, 400, 'bad address', 'text/plain; charset=utf-8');
      const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
      if (url.pathname === '/login' && req.method === 'GET') {
        const given = url.searchParams.get('secret') ?? '';
        if (!same(given, secret)) return forbid(res);
        res.writeHead(303, {
          ...HEADERS,
          Location: '/',
          'Set-Cookie': `${COOKIE}=${session}; HttpOnly; SameSite=Strict; Path=/`,
        });
        return res.end();
      }
      if (!same(cookieOf(req, COOKIE) ?? '', session)) return forbid(res);
      if (url.pathname === '/assets/console.css') return send(res, 200, CSS, 'text/css; charset=utf-8');
      if (url.pathname === '/assets/console.js') return send(res, 200, JS, 'text/javascript; charset=utf-8');
      if (url.pathname === '/assets/icon.svg') return send(res, 200, ICON, 'image/svg+xml');
      let form: URLSearchParams | undefined;
      if (req.method === 'POST') {
        form = await readForm(req);
        if (!form) return send(res, 413, 'form too large', 'text/plain; charset=utf-8');
        if (!same(form.get('csrf') ?? '', csrf)) return forbid(res);
      } else if (req.method !== 'GET' && req.method !== 'HEAD') {
        return send(res, 405, 'method not allowed', 'text/plain; charset=utf-8', { Allow: 'GET, HEAD, POST' });
      }
      const answer = await route(
        { method: req.method === 'POST' ? 'POST' : 'GET', path: url.pathname, query: url.searchParams, form },
        { csrf, invoke, once },
      );
      if ('redirect' in answer) {
        res.writeHead(303, { ...HEADERS, Location: answer.redirect });
        return res.end();
      }
      send(res, answer.status, answer.body);
    })().catch((err) => {
      process.stderr.write(`console: ${(err as Error).stack}\n`);
      if (!res.headersSent) send(res, 500, 'console error (see its terminal)', 'text/plain; charset=utf-8');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    loginUrl: `${origin}/login?secret=${secret}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
