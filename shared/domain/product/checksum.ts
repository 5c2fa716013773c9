/**
 * A product's checksum: SHA-256 (hex) of the RFC 8785 canonical JSON of its write shape, the body
 * this key would PUT to write it as it is now (docs/catalog-writes.md#checksums), so an integrator
 * hashes its own record and compares without fetching the product.
 */
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { ProductFields } from './product-write.ts';
import type { Product } from './product.ts';
import { refused, type Refused } from '../outcome.ts';

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

/**
 * A write's precondition (If-Match / If-None-Match): `ifMatch` the checksums the record must have
 * now (`*`: it must exist), `createOnly` that it must not exist yet.
 */
export interface WriteCondition {
  ifMatch?: readonly string[] | '*';
  createOnly?: boolean;
}

/** Which part of a condition fails for a record with this checksum (undefined: none exists), or null when it holds. */
export function failedCondition(
  condition: WriteCondition,
  checksum: string | undefined,
): 'If-Match' | 'If-None-Match' | null {
  if (condition.createOnly && checksum !== undefined) return 'If-None-Match';
  const ifMatch = condition.ifMatch;
  if (ifMatch === undefined) return null;
  if (checksum === undefined) return 'If-Match';
  return ifMatch === '*' || ifMatch.includes(checksum) ? null : 'If-Match';
}

/** The 412 refusal of a write whose condition did not hold: `field` names the header that failed. */
export const preconditionFailed = (header: 'If-Match' | 'If-None-Match'): Refused =>
  refused(
    'precondition_failed',
    header === 'If-Match'
      ? 'The record changed since this ETag was read (If-Match).'
      : 'The record already exists (If-None-Match: *).',
    header,
  );
