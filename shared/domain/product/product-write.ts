/**
 * The product write shape (docs/contract.md#resources-and-fields, docs/contract.md#products): its validation and how a write lands on a
 * stored product. Pure: the route resolves references and the repository does the I/O.
 */
import { nextUpdatedAt } from '../time.ts';
import * as v from 'valibot';
import { checkImageUrl } from './image-url.ts';
import { PRODUCT_STATUSES, type Offer, type Product, type ProductStatus } from './product.ts';
import { described, ExternalIdSchema } from '../validation.ts';
import { plainText } from '../text.ts';

export const MAX_PRICE = 1_000_000_000_000;
export const MAX_LINKS = 50;

const Name = plainText({ min: 1, max: 255 });

const Price = v.pipe(
  v.number('must be an integer (minor units)'),
  v.integer('must be an integer (minor units)'),
  v.minValue(0, 'must be at least 0'),
  v.maxValue(MAX_PRICE, 'must be at most 1000000000000'),
);

const Quantity = v.pipe(
  v.number('must be an integer'),
  v.integer('must be an integer'),
  v.minValue(0, 'must be at least 0'),
  v.maxValue(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`),
);

// An empty SKU means "no SKU" to most CRMs; stored as null so that it never becomes a SKU link.
const Sku = v.nullable(
  v.pipe(
    plainText({ min: 0, max: 64 }),
    v.transform((s): string | null => (s === '' ? null : s)),
  ),
);

const Description = plainText({ min: 0, max: 65_535, multiLine: true });

const Status = v.picklist(PRODUCT_STATUSES, `must be one of ${PRODUCT_STATUSES.join(', ')}`);

// The normalized URL is what gets stored: what was checked is what a consumer will fetch.
const ImageUrl = v.nullable(
  v.pipe(
    v.string('must be a string or null'),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      const checked = checkImageUrl(dataset.value);
      if (checked.ok) return checked.url;
      addIssue({ message: `invalid_image_url: ${checked.reason}` });
      return NEVER;
    }),
  ),
);

/** ≤ 50 distinct external ids; a repeated one is reported at its second position. */
const ExternalIdList = v.pipe(
  v.array(ExternalIdSchema, 'must be an array of external ids'),
  v.maxLength(MAX_LINKS, `must hold at most ${MAX_LINKS} external ids`),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Set<string>();
    for (const [i, id] of dataset.value.entries()) {
      if (seen.has(id)) {
        addIssue({
          message: `repeats ${id}; the ids must be distinct`,
          path: [{ type: 'array', origin: 'value', input: dataset.value, key: i, value: id }],
        });
        return;
      }
      seen.add(id);
    }
  }),
);

/** The write fields with what they mean: the MCP tool schemas and the API reference are generated from these. */
const fields = {
  name: described(Name, 'Product name, 1-255 characters of plain text.'),
  price: described(Price, 'Price of the first variant in minor units (49000 = 490.00).'),
  quantity: described(Quantity, 'Stock of the first variant. Default 0.'),
  sku: described(Sku, 'SKU of the first variant (at most 64 characters), or null.'),
  description: described(Description, 'Plain text, at most 65,535 characters.'),
  status: described(Status, 'active (default), draft or archived; any status but active archives the product.'),
  image_url: described(ImageUrl, 'A public https address, or null.'),
  category_external_ids: described(
    ExternalIdList,
    'External ids of existing categories of this key (create them first); at most 50, distinct. Replaces the current list.',
  ),
  tag_external_ids: described(
    ExternalIdList,
    'External ids of existing tags of this key (create them first); at most 50, distinct. Replaces the current list.',
  ),
};

/** PUT: every write field, omitted ones take their defaults (docs/contract.md#products). */
export const ProductPutBody = v.strictObject({
  name: fields.name,
  price: fields.price,
  quantity: v.optional(fields.quantity, 0),
  sku: v.optional(fields.sku, null),
  description: v.optional(fields.description, ''),
  status: v.optional(fields.status, 'active'),
  image_url: v.optional(fields.image_url, null),
  category_external_ids: v.optional(fields.category_external_ids, () => []),
  tag_external_ids: v.optional(fields.tag_external_ids, () => []),
});

/** PATCH: any subset; an omitted field is absent from the output, so it stays as stored. */
export const ProductPatchBody = v.strictObject({
  name: v.optional(fields.name),
  price: v.optional(fields.price),
  quantity: v.optional(fields.quantity),
  sku: v.optional(fields.sku),
  description: v.optional(fields.description),
  status: v.optional(fields.status),
  image_url: v.optional(fields.image_url),
  category_external_ids: v.optional(fields.category_external_ids),
  tag_external_ids: v.optional(fields.tag_external_ids),
});

export type ProductWrite = v.InferOutput<typeof ProductPutBody>;
export type ProductPatch = v.InferOutput<typeof ProductPatchBody>;

export interface ProductFields {
  name: string;
  price: number;
  quantity: number;
  sku: string | null;
  description: string;
  status: ProductStatus;
  image_url: string | null;
  category_external_ids: string[];
  tag_external_ids: string[];
}

/** A validated write with its categories resolved: `category_ids` is present exactly when `category_external_ids` is. */
export type ProductChange = Partial<ProductFields> & { category_ids?: number[] };

const newOffer = (price: number, quantity: number, sku: string | null): Omit<Offer, 'id'> => ({
  sku,
  price,
  quantity,
  properties: [],
  weight: null,
  length: null,
  height: null,
  width: null,
});

/** A product before it has ids: what a create decides, numbered once its ids are known. */
export type NewProduct = Omit<Product, 'id' | 'offers'> & { offers: Omit<Offer, 'id'>[] };

/** The product a first PUT creates (`numbered` gives it its product and offer ids). */
export function newProductDraft(
  write: ProductFields & { category_ids: number[] },
  owner: { storeId: string; keyId: number; externalId: string },
  now: string,
): NewProduct {
  return {
    store_id: owner.storeId,
    external_id: owner.externalId,
    owner_key_id: owner.keyId,
    name: write.name,
    description: write.description,
    status: write.status,
    image_url: write.image_url,
    category_ids: write.category_ids,
    category_external_ids: write.category_external_ids,
    tag_external_ids: write.tag_external_ids,
    offers: [newOffer(write.price, write.quantity, write.sku)],
    created_at: now,
    updated_at: now,
  };
}

/**
 * `current` with the supplied write fields applied, or null when nothing would change (then the
 * caller writes nothing and `updated_at` stays). price/quantity/sku are the first variant's;
 * its other attributes and every further variant are the store admin's and are kept.
 * `newOfferId` is needed only when the stored product has no variant at all.
 */
export function applyProductChange(
  current: Product,
  change: ProductChange,
  now: string,
  newOfferId?: number,
): Product | null {
  const pick = <K extends keyof ProductChange>(k: K, fallback: NonNullable<ProductChange[K]> | null) =>
    (k in change ? change[k] : fallback) as NonNullable<ProductChange[K]>;
  const [first, ...rest] = current.offers;
  const touchesOffer = 'price' in change || 'quantity' in change || 'sku' in change;
  let offers = current.offers;
  if (first) {
    offers = [
      {
        ...first,
        price: pick('price', first.price),
        quantity: pick('quantity', first.quantity),
        sku: pick('sku', first.sku),
      },
      ...rest,
    ];
  } else if (touchesOffer) {
    if (newOfferId === undefined) throw new Error('a product without variants needs an offer id');
    offers = [{ id: newOfferId, ...newOffer(change.price ?? 0, change.quantity ?? 0, change.sku ?? null) }];
  }
  const next: Product = {
    ...current,
    name: pick('name', current.name),
    description: pick('description', current.description),
    status: pick('status', current.status),
    image_url: pick('image_url', current.image_url) ?? null,
    category_ids: pick('category_ids', current.category_ids),
    category_external_ids: pick('category_external_ids', current.category_external_ids),
    tag_external_ids: pick('tag_external_ids', current.tag_external_ids),
    offers,
  };
  if (JSON.stringify(next) === JSON.stringify(current)) return null;
  return { ...next, updated_at: nextUpdatedAt(current.updated_at, Date.parse(now)) };
}

/** True when applying `change` needs an offer id that the stored product does not have. */
export function needsNewOffer(current: Product, change: ProductChange): boolean {
  return current.offers.length === 0 && ('price' in change || 'quantity' in change || 'sku' in change);
}

/** Offer ids the drafts take: one per variant. */
export const offerCount = (drafts: readonly NewProduct[]): number => drafts.reduce((n, d) => n + d.offers.length, 0);

/** The drafts with consecutive ids from `firstId` and offer ids from `firstOffer`. */
export function numbered(drafts: readonly NewProduct[], firstId: number, firstOffer: number): Product[] {
  let nextOffer = firstOffer;
  return drafts.map((d, i) => ({ ...d, id: firstId + i, offers: d.offers.map((o) => ({ ...o, id: nextOffer++ })) }));
}
