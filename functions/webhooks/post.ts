import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { checkWebhookUrl } from '#domain/key/webhook-url.ts';
import { isAllowedWebhookAddress, refusedAddressReason } from '#domain/webhook/address-policy.ts';
import { pinnedLookup, RefusedAddress } from '#domain/webhook/pinned-lookup.ts';
import { parseRetryAfter } from '#domain/webhook/retry.ts';
import type { PostResult } from '#domain/webhook/deliverable.ts';

// Required, not imported: on Node 22 the ES module namespace of node:http loads undici, ~25 ms of a
// cold start (infra/node-http.ts).
const requireBuiltin = createRequire(import.meta.url);
const http = requireBuiltin('node:http') as typeof import('node:http');
const https = requireBuiltin('node:https') as typeof import('node:https');

export const WEBHOOK_TIMEOUT_MS = 10_000;
/**
 * A receiver that does not even accept the connection within this is given up on early: a
 * blackholed address would otherwise hold a signer slot for the whole 10 s (docs/webhooks.md,
 * "Isolation").
 */
export const WEBHOOK_CONNECT_TIMEOUT_MS = 3_000;
export const USER_AGENT = 'store-integration-webhooks/1';
/**
 * The most of a receiver's answer body read: its status is the outcome and the body is never
 * stored, so a receiver answering gigabytes must not hold a signer slot while they are read. Past
 * this the attempt ends with the status and the connection is destroyed.
 */
export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

class ConnectTimeout extends Error {
  readonly code = 'ECONNECTTIMEOUT';
}

function describeFailure(err: unknown, timedOutAfterMs: number | null): string {
  if (err instanceof ConnectTimeout) return `timeout: no connection within ${WEBHOOK_CONNECT_TIMEOUT_MS / 1000} s`;
  if (timedOutAfterMs !== null) return `timeout: no complete response within ${timedOutAfterMs / 1000} s`;
  if (err instanceof RefusedAddress) return err.message;
  const e = err as NodeJS.ErrnoException;
  return `connection failed: ${e.code ?? e.message}`;
}

/**
 * POSTs one delivery. The URL is checked again (stored URLs may predate a policy change), an
 * IP-literal host is checked directly (the socket does no lookup for it), and a name is resolved
 * through `pinnedLookup`. Redirects are not followed: a 3xx is a failed attempt. The response
 * body is read only to free the connection, never stored, and no further than
 * MAX_RESPONSE_BODY_BYTES.
 */
export async function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: { allowLoopback: boolean; timeoutMs?: number; connectTimeoutMs?: number },
): Promise<PostResult> {
  const started = Date.now();
  const done = (status: number | null, error: string | null, retryAfterSeconds?: number): PostResult => ({
    status,
    error,
    retryAfterSeconds,
    ms: Date.now() - started,
  });

  const checked = checkWebhookUrl(rawUrl, options.allowLoopback);
  if (!checked.ok) return done(null, `refused: ${checked.reason}`);
  const url = new URL(checked.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !isAllowedWebhookAddress(host, options.allowLoopback))
    return done(null, refusedAddressReason(host, host));

  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = () => (signal.aborted ? timeoutMs : null);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((settle) => {
    let settled = false;
    const resolve = (r: PostResult) => {
      if (settled) return;
      settled = true;
      settle(r);
    };
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'content-length': String(Buffer.byteLength(body)),
        },
        lookup: pinnedLookup(options.allowLoopback),
        // One connection per attempt: no pooled socket outlives the address check it was made under.
        agent: false,
        signal,
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const answered = () => {
          const retryAfter =
            status === 429 || status === 503 ? parseRetryAfter(res.headers['retry-after'], Date.now()) : undefined;
          resolve(done(status, status >= 200 && status < 300 ? null : `HTTP ${status}`, retryAfter));
        };
        let bodyBytes = 0;
        res.on('data', (chunk: Buffer) => {
          bodyBytes += chunk.length;
          if (bodyBytes <= MAX_RESPONSE_BODY_BYTES) return;
          answered();
          res.destroy();
        });
        res.on('end', answered);
        res.on('error', (err) => resolve(done(null, describeFailure(err, timedOut()))));
        // A body cut off (timeout, reset) may end in 'close' without 'end' or 'error'.
        res.on('close', () => resolve(done(null, describeFailure(new Error('response ended early'), timedOut()))));
      },
    );
    req.on('error', (err) => resolve(done(null, describeFailure(err, timedOut()))));
    // The socket exists before the lookup; 'connect' (or 'secureConnect' follows it) ends the wait.
    const connectTimer = setTimeout(
      () => req.destroy(new ConnectTimeout()),
      options.connectTimeoutMs ?? WEBHOOK_CONNECT_TIMEOUT_MS,
    );
    req.on('socket', (socket) => {
      if (!socket.connecting) return clearTimeout(connectTimer);
      socket.once('connect', () => clearTimeout(connectTimer));
    });
    req.on('close', () => clearTimeout(connectTimer));
    req.end(body);
  });
}
