/**
 * Examples from the demo store (example-data.ts), mapped by the same functions the
 * handlers answer with, so the reference shows what `npm start` serves. Ids are numbered in seed
 * order; times are fixed so the document is stable.
 */
import { toMappedProduct, toProductResource, type Product } from '#domain/product/product.ts';
import { toOrderResource, type Order } from '#domain/order/order.ts';
import { toPageResource } from '#domain/page/page.ts';
import { pageEnvelope } from '#domain/pagination.ts';
import {
  DEMO_CATEGORIES,
  DEMO_CURRENCY,
  DEMO_STORE,
  DEMO_TAGS,
  demoOrders,
  demoPages,
  demoProducts,
  type DemoSku,
} from './example-data.ts';
import type { Operation } from '../api-routes.ts';
import { DEFAULT_SERVER_URL } from './defaults.ts';

const AT = '2026-11-20T10:00:00.000Z';
const LATER = '2026-11-22T01:24:20.000Z';
const KEY_ID = 1;

function products(): Product[] {
  let offerId = 0;
  return demoProducts().map((p, i) => ({
    id: i + 1,
    store_id: DEMO_STORE,
    external_id: p.external_id,
    owner_key_id: KEY_ID,
    name: p.name,
    description: p.description,
    status: p.status,
    image_url: p.image_url,
    category_ids: [DEMO_CATEGORIES.findIndex(([x]) => x === p.category_external_id) + 1],
    category_external_ids: [p.category_external_id],
    tag_external_ids: p.tag_external_ids,
    offers: p.offers.map((o) => ({ ...o, id: ++offerId })),
    created_at: AT,
    updated_at: AT,
  }));
}

function orders(all: Product[]): Order[] {
  const skus: DemoSku[] = all.flatMap((p) =>
    p.offers.map((o) => ({ sku: o.sku as string, name: p.name, price: o.price, productId: p.id, offerId: o.id })),
  );
  return demoOrders(skus).map(({ reference, status, ...rest }, i) => ({
    id: i + 1,
    store_id: DEMO_STORE,
    reference,
    status,
    currency_code: DEMO_CURRENCY,
    ...rest,
    created_at: AT,
    updated_at: AT,
  }));
}

const pages = () =>
  demoPages().map((p, i) =>
    toPageResource({
      id: i + 1,
      store_id: DEMO_STORE,
      owner_key_id: KEY_ID,
      ...p,
      published_at: p.status === 'draft' ? null : AT,
      draft: null,
      created_at: AT,
      updated_at: AT,
    }),
  );

function examples() {
  const all = products();
  const [first, second] = all as [Product, Product];
  const orderList = orders(all);
  const processing = orderList.find((o) => o.status === 'processing')!;
  const shipped = toOrderResource({ ...processing, status: 'shipped', updated_at: LATER });
  const pageList = pages();
  const draft = pageList.find((p) => p.status === 'draft')!;
  const mapped = toMappedProduct(second, DEMO_CURRENCY);
  const [categoryId, categoryName] = DEMO_CATEGORIES[0];
  const [tagId, tagValue] = DEMO_TAGS[0];
  const secondOffer = second.offers[0]!;
  const productWrite = {
    name: second.name,
    price: secondOffer.price,
    quantity: secondOffer.quantity,
    sku: secondOffer.sku,
    description: second.description,
    status: second.status,
    image_url: second.image_url,
    category_external_ids: second.category_external_ids,
    tag_external_ids: second.tag_external_ids,
  };
  const pageWrite = { type: draft.type, title: draft.title, slug: draft.slug, body: draft.body };
  const response: Partial<Record<Operation, unknown>> = {
    listProducts: pageEnvelope({
      data: [first, second].map((p) => toProductResource(p, DEMO_CURRENCY, false)),
      page: 1,
      limit: 2,
      total: all.length,
      path: `${DEFAULT_SERVER_URL}/products`,
      query: { limit: '2' },
    }),
    getProduct: { data: toProductResource(first, DEMO_CURRENCY, true) },
    upsertProduct: { data: mapped },
    updateProduct: { data: mapped },
    upsertProducts: {
      data: [{ external_id: second.external_id, status: 200, result: 'updated', data: mapped, error: null }],
    },
    upsertCategory: { data: { id: 1, external_id: categoryId, name: categoryName, created_at: AT, updated_at: AT } },
    upsertTag: { data: { id: 1, external_id: tagId, value: tagValue, created_at: AT, updated_at: AT } },
    listEvents: { data: [], next_cursor: null },
    listOrders: { data: orderList.slice(0, 2).map(toOrderResource), next_cursor: 2 },
    setOrderStatus: { data: shipped },
    listPages: { data: pageList, next_cursor: null },
    savePage: { data: draft },
    publishPage: { data: { ...draft, status: 'published', published_at: LATER, updated_at: LATER } },
    unpublishPage: { data: pageList.find((p) => p.status === 'unpublished') },
  };
  const request: Partial<Record<Operation, unknown>> = {
    upsertProduct: productWrite,
    updateProduct: { price: secondOffer.price, quantity: secondOffer.quantity },
    upsertProducts: { mode: 'replace', items: [{ external_id: second.external_id, ...productWrite }] },
    upsertCategory: { name: categoryName },
    upsertTag: { value: tagValue },
    setOrderStatus: { status: 'shipped' },
    savePage: pageWrite,
    mcp: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  };
  const event = (sequence: number, type: string, timestamp: string, changed: string[], data: unknown) => ({
    id: `evt_${String(sequence).padStart(32, '0')}`,
    sequence,
    type,
    timestamp,
    origin: { kind: 'key', key_id: KEY_ID },
    changed_fields: changed,
    data,
  });
  const webhook: Record<string, unknown> = {
    'order.status_changed': event(42, 'order.status_changed', LATER, ['status'], {
      order: shipped,
      previous_status: 'processing',
      status: 'shipped',
    }),
    'product.updated': event(41, 'product.updated', AT, ['price', 'quantity'], {
      product: { ...toProductResource(first, null, true), external_id: first.external_id },
    }),
  };
  return { response, request, webhook };
}

let cached: ReturnType<typeof examples> | undefined;
const get = () => (cached ??= examples());

export const responseExample = (operation: string) => get().response[operation as Operation];
export const requestExample = (operation: string) => get().request[operation as Operation];
export const webhookExample = (type: string) => get().webhook[type];
