import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { checkWebhookUrl } from '#domain/key/webhook-url.ts';
import { checkClientMetadata, type ClientCheck } from '#domain/oauth/oauth.ts';
import { isAllowedWebhookAddress, refusedAddressReason } from '#domain/webhook/address-policy.ts';
import { pinnedLookup } from '#domain/webhook/pinned-lookup.ts';
import { log } from '#shared/log.ts';

const requireBuiltin = createRequire(import.meta.url);
const http = requireBuiltin('node:http') as typeof import('node:http');
const https = requireBuiltin('node:https') as typeof import('node:https');

const MAX_BYTES = 10_000;
/** What a caller is told of any failure to fetch and read a metadata document. */
export const METADATA_NOT_FETCHED = 'the client metadata document at client_id could not be fetched as JSON';
const TIMEOUT_MS = 5_000;

/**
 * Fetches a Client ID Metadata Document (`client_id` is its URL) under the webhook URL rules
 * (shared/domain/key/webhook-url.ts): a public https host, every resolved address public and the
 * connection pinned to them (functions/webhooks/post.ts), no redirects, 10 KB, 5 s. The document
 * must name the same `client_id` it was fetched from.
 */
export function fetchClientMetadata(allowLoopback: boolean) {
  return async (clientId: string): Promise<ClientCheck> => {
    const checked = checkWebhookUrl(clientId, allowLoopback);
    if (!checked.ok) return { ok: false, reason: checked.reason.replace(/^webhook_url/, 'client_id') };
    const url = new URL(checked.url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !isAllowedWebhookAddress(host, allowLoopback))
      return { ok: false, reason: refusedAddressReason(host, host) };
    const text = await get(url).catch((err: Error) => ({ error: err.message }));
    let body: unknown;
    try {
      if (typeof text !== 'string') throw new Error(text.error);
      body = JSON.parse(text);
    } catch (err) {
      // The caller is told one fixed text whatever went wrong: "ECONNREFUSED 127.0.0.1:22", "HTTP 404"
      // or "not JSON" would tell an outsider which ports and services answer where this function
      // runs. The operator's log keeps the cause.
      log('info', 'oauth: client metadata document not fetched', {
        client_id: clientId,
        error_message: (err as Error).message,
      });
      return { ok: false, reason: METADATA_NOT_FETCHED };
    }
    if ((body as { client_id?: unknown })?.client_id !== clientId)
      return { ok: false, reason: 'the client metadata document names another client_id' };
    return checkClientMetadata(body, clientId);
  };

  function get(url: URL): Promise<string> {
    const transport = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(
        url,
        {
          method: 'GET',
          headers: { accept: 'application/json' },
          lookup: pinnedLookup(allowLoopback),
          agent: false,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new Error(`HTTP ${res.statusCode}`));
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BYTES) return req.destroy(new Error(`larger than ${MAX_BYTES} bytes`));
            chunks.push(chunk);
          });
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end();
    });
  }
}
