import { checkPublicHttpsUrl, type UrlCheck } from '../net/public-address.ts';

/**
 * Validation of a product's `image_url`: the address is stored and later fetched by us or handed
 * to consumers, so it must be a public https address (the policy and its reasons are in
 * shared/domain/net/public-address.ts). Callers store `result.url`, the normalized form, so that
 * what was checked is what gets fetched.
 *
 * No file-extension check: CDN image URLs routinely have none.
 */
export function checkImageUrl(input: string): UrlCheck {
  return checkPublicHttpsUrl(input, 'image_url');
}
