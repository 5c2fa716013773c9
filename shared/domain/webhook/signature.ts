import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com), with node:crypto so that the
 * Lambda bundle carries no extra dependency; the unit tests check every output against the
 * `standardwebhooks` package and the test vectors of docs/webhooks.md.
 *
 * Signed content: `{webhook-id}.{webhook-timestamp}.{body}`, HMAC-SHA256 keyed with the
 * base64-decoded part of the `whsec_` secret, sent as `v1,<base64>`. Several signatures (a
 * secret rotation's grace period) are separated by single spaces; a receiver accepts the
 * delivery when any of them verifies.
 */
export const SECRET_PREFIX = 'whsec_';

export function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('webhook secret is empty');
  return key;
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`, 'utf8')
    .digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The three headers of one delivery attempt; `secrets` newest first. */
export function signedHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): SignedHeaders {
  if (secrets.length === 0) throw new Error('no webhook secret to sign with');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' '),
  };
}

/**
 * The KMS encryption context of a sealed webhook secret: it names the purpose, so a ciphertext
 * made for something else under the same key does not decrypt as a secret, and the key policy
 * (infra/key-policy.ts) admits Encrypt/Decrypt only with it.
 */
export const WEBHOOK_SECRET_ENCRYPTION_CONTEXT = { purpose: 'webhook-secret' } as const;
