import { checkImageUrl } from '../product/image-url.ts';

/**
 * Webhook URLs follow the same public-https rule as image addresses (no private hosts, no IP
 * literals, port 443). Only the local stack (ALLOW_PRIVATE_WEBHOOKS=1) admits loopback receivers.
 */
export function checkWebhookUrl(input: string, allowPrivate: boolean): { ok: true; url: string } | { ok: false; reason: string } {
  if (allowPrivate) {
    try {
      const url = new URL(input);
      if ((url.protocol === 'http:' || url.protocol === 'https:') && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) && !url.username && !url.password) {
        return { ok: true, url: url.href };
      }
    } catch {
      return { ok: false, reason: 'webhook_url is not a valid URL' };
    }
  }
  const checked = checkImageUrl(input);
  return checked.ok ? checked : { ok: false, reason: checked.reason.replace(/^image_url/, 'webhook_url') };
}
