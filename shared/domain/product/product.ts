/** Products as the store holds them; variants ("offers") live inside the product record. */
import { refused } from '../outcome.ts';
import { productChecksum } from './checksum.ts';

/** The 404 of a product that is not there: `field` names what addressed it, if the caller's own id. */
export const productNotFound = (field: string | null = null) =>
  refused('not_found', 'The product does not exist.', field);

export type ProductStatus = 'active' | 'draft' | 'archived';
export const PRODUCT_STATUSES: readonly ProductStatus[] = ['active', 'draft', 'archived'];

export interface OfferProperty {
  name: string;
  value: string;
}

export interface Offer {
  id: number;
  sku: string | null;
  price: number;
  quantity: number;
  properties: OfferProperty[];
  weight: number | null;
  length: number | null;
  height: number | null;
  width: number | null;
}

export interface Product {
  id: number;
  store_id: string;
  /** The caller's id for it, scoped to `owner_key_id`; null for products made in the store's own admin. */
  external_id: string | null;
  owner_key_id: number | null;
  name: string;
  description: string;
  status: ProductStatus;
  image_url: string | null;
  category_ids: number[];
  category_external_ids: string[];
  tag_external_ids: string[];
  offers: Offer[];
  created_at: string;
  updated_at: string;
}

/** The read shape of docs/contract.md#resources-and-fields. */
export interface ProductResource {
  id: number;
  name: string;
  description: string;
  sku: string | null;
  thumbnail_url: string | null;
  quantity: number;
  currency_code: string | null;
  min_price: number;
  max_price: number;
  weight: number | null;
  length: number | null;
  height: number | null;
  width: number | null;
  has_offers: boolean;
  is_archived: boolean;
  category_id: number | null;
  created_at: string | null;
  updated_at: string | null;
  offers?: { id: number; sku: string | null; price: number; quantity: number; properties: OfferProperty[] }[];
}

export function toProductResource(p: Product, currency: string | null, includeOffers: boolean): ProductResource {
  const first = p.offers[0];
  const prices = p.offers.map((o) => o.price);
  const resource: ProductResource = {
    id: p.id,
    name: p.name,
    description: p.description,
    sku: first?.sku ?? null,
    thumbnail_url: p.image_url,
    quantity: p.offers.reduce((sum, o) => sum + o.quantity, 0),
    currency_code: currency,
    min_price: prices.length ? Math.min(...prices) : 0,
    max_price: prices.length ? Math.max(...prices) : 0,
    weight: first?.weight ?? null,
    length: first?.length ?? null,
    height: first?.height ?? null,
    width: first?.width ?? null,
    has_offers: p.offers.length > 1,
    is_archived: p.status !== 'active',
    category_id: p.category_ids[0] ?? null,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
  if (includeOffers) {
    resource.offers = p.offers.map((o) => ({
      id: o.id,
      sku: o.sku,
      price: o.price,
      quantity: o.quantity,
      properties: o.properties,
    }));
  }
  return resource;
}

/**
 * The write endpoints' answer: the read shape plus the caller's own ids and the checksum of the write
 * shape (docs/contract.md#products, docs/catalog-writes.md#checksums). As in the read shape, `offers`
 * appears only when `include=offers` was asked for.
 */
export function toMappedProduct(p: Product, currency: string | null, includeOffers = false) {
  return {
    ...toProductResource(p, currency, includeOffers),
    external_id: p.external_id,
    category_external_ids: p.category_external_ids,
    tag_external_ids: p.tag_external_ids,
    checksum: productChecksum(p),
  };
}

/** Case-insensitive substring match of filter[name]; one normalisation for both sides. */
export const normalizeName = (s: string) => s.normalize('NFKC').toLowerCase();
