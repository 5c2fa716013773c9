/**
 * A product's checksum: SHA-256 (hex) of the RFC 8785 canonical JSON of its write shape, the body
 * this key would PUT to write it as it is now (docs/catalog-writes.md#checksums), so an integrator
 * hashes its own record and compares without fetching the product.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ProductFields } from './product-write.ts';
import type { Product } from './product.ts';

/**
 * The write shape of a stored product: price, quantity and sku are its first variant's (0, 0 and
 * null when it has none, PUT's defaults); further variants and their other attributes are the
 * store admin's and are not part of it.
 */
export function writeShape(p: Product): ProductFields {
  const first = p.offers[0];
  return {
    name: p.name,
    sku: first?.sku ?? null,
    price: first?.price ?? 0,
    quantity: first?.quantity ?? 0,
    description: p.description,
    status: p.status,
    image_url: p.image_url,
    category_external_ids: p.category_external_ids,
    tag_external_ids: p.tag_external_ids,
  };
}

/** SHA-256 hex of the canonical JSON of a write shape (the exact bytes: docs/catalog-writes.md#checksums). */
export function checksumOf(shape: ProductFields): string {
  const canonical = canonicalize(shape);
  if (canonical === undefined) throw new Error('a write shape is always JSON');
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}

export const productChecksum = (p: Product): string => checksumOf(writeShape(p));
