import { checkPublicHttpsUrl, type UrlCheck } from '../net/public-address.ts';

/**
 * Webhook URLs follow the public https address policy of shared/domain/net/public-address.ts (no
 * private or internal hosts, no IP literals, no credentials), except that any port is allowed:
 * receivers on :8443 are common and the host is checked to be public, here and again on every
 * delivery at connect time. Only the local stack (ALLOW_PRIVATE_WEBHOOKS=1) admits loopback
 * receivers.
 */
export function checkWebhookUrl(input: string, allowPrivate: boolean): UrlCheck {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, reason: 'webhook_url is not a valid URL' };
  }
  if (allowPrivate) {
    if (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) &&
      !url.username &&
      !url.password
    ) {
      return { ok: true, url: url.href };
    }
  }
  const withoutPort = new URL(url.href);
  withoutPort.port = '';
  const checked = checkPublicHttpsUrl(url.protocol === 'https:' ? withoutPort.href : input, 'webhook_url');
  return checked.ok ? { ok: true, url: url.href } : checked;
}
