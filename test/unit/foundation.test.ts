import { describe, expect, it } from 'vitest';
import { keys } from '#db/keys.ts';
import { denseIdsOfPage, pageEnvelope } from '#domain/pagination.ts';
import { matchPath } from '#emulation/local/match-path.ts';
import { generateToken, hashToken, looksLikeToken } from '#domain/key/api-key.ts';
import { parseAbilities } from '#domain/key/abilities.ts';
import { toProductResource, type Product } from '#domain/product/product.ts';
import { bearerToken } from '#http/bearer.ts';

describe('key builders', () => {
  it('pads ids so that sort keys order numerically', () => {
    expect(keys.product('s1', 42)).toEqual({ pk: 'STORE#s1', sk: 'PRODUCT#000000000042' });
    expect(keys.order('s1', 9).sk < keys.order('s1', 10).sk).toBe(true);
    expect(keys.idOf('ORDER#000000000123')).toBe(123);
    expect(keys.afterId('ORDER#', 7)).toBe('ORDER#000000000007');
  });

  it('scopes external ids, categories and tags to the key, records to the store', () => {
    expect(keys.externalId(5, 'product', 'crm-1')).toEqual({ pk: 'KEY#5', sk: 'XID#product#crm-1' });
    expect(keys.category(5, 'c')).toEqual({ pk: 'KEY#5', sk: 'CATEGORY#c' });
    expect(keys.tag(5, 't')).toEqual({ pk: 'KEY#5', sk: 'TAG#t' });
    expect(keys.orderRef('s', 'R-1')).toEqual({ pk: 'STORE#s', sk: 'ORDERREF#R-1' });
    expect(keys.idempotency(5, 'POST', '/p', 'k')).toEqual({ pk: 'KEY#5', sk: 'IDEMPOTENCY#POST /p#k' });
  });

  it('files a trigram posting under the partition of its first code point, so a short needle is one sort-key prefix', () => {
    expect(keys.nameGram('s', 'oak', 42)).toEqual({ pk: 'STORE#s#NAMEGRAM#o', sk: 'oak#000000000042' });
    expect(keys.nameGram('s', '😀ab', 7).pk).toBe(keys.nameGramPartition('s', '😀'));
    expect(keys.namePending('s', 3)).toEqual({ pk: keys.namePendingPartition('s'), sk: 'PRODUCT#000000000003' });
  });

  it('keeps the order update index sortable by time, then id', () => {
    const a = keys.orderUpdateIndex('s', '2026-01-01T00:00:00.000Z', 10);
    const b = keys.orderUpdateIndex('s', '2026-01-01T00:00:00.000Z', 9);
    expect(a.gsi1pk).toBe('STORE#s#ORDERS_BY_UPDATE');
    expect(b.gsi1sk < a.gsi1sk).toBe(true);
  });
});

describe('page envelope', () => {
  const base = { path: 'https://x/api/v1/integrations/products', query: { limit: '2' } };
  it('computes from/to/last_page and links that keep the other parameters', () => {
    const e = pageEnvelope({ ...base, data: ['a', 'b'], page: 2, limit: 2, total: 5 });
    expect(e).toMatchObject({ current_page: 2, from: 3, to: 4, last_page: 3, total: 5, per_page: 2 });
    expect(e.next_page_url).toBe('https://x/api/v1/integrations/products?limit=2&page=3');
    expect(e.prev_page_url).toBe('https://x/api/v1/integrations/products?limit=2&page=1');
  });
  it('has null from/to and last_page 1 for an empty list', () => {
    expect(pageEnvelope({ ...base, data: [], page: 1, limit: 2, total: 0 })).toMatchObject({
      from: null,
      to: null,
      last_page: 1,
      next_page_url: null,
      prev_page_url: null,
    });
  });
  it('maps a page to its dense id range', () => {
    expect(denseIdsOfPage(3, 4)).toEqual([9, 10, 11, 12]);
  });
});

describe('route matching (the local API Gateway)', () => {
  it('matches templates and decodes parameters', () => {
    const m = matchPath('GET', '/api/v1/integrations/products/42');
    expect(m.route?.operation).toBe('getProduct');
    expect(m.route && 'pathParameters' in m ? m.pathParameters : {}).toEqual({ id: '42' });
  });
  it('finds nothing outside the base path, for extra segments, or for another method', () => {
    expect(matchPath('GET', '/products').route).toBeUndefined();
    expect(matchPath('GET', '/api/v1/integrations/products/1/x').route).toBeUndefined();
    expect(matchPath('DELETE', '/api/v1/integrations/products/1').route).toBeUndefined();
    expect(matchPath('GET', '/api/v1/integrations/products/%E0%A4%A').route).toBeUndefined();
  });
});

describe('tokens and abilities', () => {
  it('issues 256-bit tokens of a recognisable shape and stores only their hash', () => {
    const a = generateToken();
    expect(looksLikeToken(a)).toBe(true);
    expect(a).not.toBe(generateToken());
    expect(hashToken(a)).toMatch(/^[0-9a-f]{64}$/);
    expect(looksLikeToken('sia_short')).toBe(false);
  });
  it('parses the bearer scheme case-insensitively and nothing else', () => {
    expect(bearerToken({ Authorization: 'Bearer abc' })).toBe('abc');
    expect(bearerToken({ authorization: 'bearer abc' })).toBe('abc');
    expect(bearerToken({ authorization: 'Basic abc' })).toBeUndefined();
    expect(bearerToken({ authorization: 'Bearer a b' })).toBeUndefined();
    expect(bearerToken(null)).toBeUndefined();
  });
  it('rejects unknown abilities and removes duplicates', () => {
    expect(parseAbilities('catalog:read, catalog:read,orders:read')).toEqual({
      ok: true,
      value: ['catalog:read', 'orders:read'],
    });
    expect(parseAbilities('catalog:read,orders:delete')).toEqual({
      ok: false,
      message:
        'unknown abilities: orders:delete (known: catalog:read, catalog:write, orders:read, orders:write-status, content:read, content:write)',
    });
  });
});

describe('product read shape', () => {
  const product: Product = {
    id: 1,
    store_id: 's',
    external_id: null,
    owner_key_id: null,
    name: 'n',
    description: '',
    status: 'draft',
    image_url: null,
    category_ids: [7, 3],
    category_external_ids: [],
    tag_external_ids: [],
    offers: [
      { id: 1, sku: 'A', price: 500, quantity: 2, properties: [], weight: 1, length: null, height: null, width: null },
      { id: 2, sku: 'B', price: 300, quantity: 5, properties: [], weight: 9, length: null, height: null, width: null },
    ],
    created_at: 't',
    updated_at: 't',
  };
  it('derives quantity, prices, first-variant fields and archive state', () => {
    expect(toProductResource(product, 'EUR', false)).toMatchObject({
      sku: 'A',
      quantity: 7,
      min_price: 300,
      max_price: 500,
      weight: 1,
      has_offers: true,
      is_archived: true,
      category_id: 7,
      currency_code: 'EUR',
    });
  });
});

describe('webhook URLs', async () => {
  const { checkWebhookUrl } = await import('#domain/key/webhook-url.ts');
  it.each([
    ['https://crm.example.com/hooks', true],
    ['https://crm.example.com:8443/hooks', true],
    ['http://crm.example.com/hooks', false],
    ['https://10.0.0.5/hooks', false],
    ['https://localhost:8443/hooks', false],
    ['https://user:pw@crm.example.com/hooks', false],
    ['https://169.254.169.254:443/latest', false],
    ['not a url', false],
  ])('public https only, any port: %s → %s', (url, ok) => {
    expect(checkWebhookUrl(url, false).ok).toBe(ok);
  });
  it('admits loopback receivers only when private webhooks are allowed (local stack)', () => {
    expect(checkWebhookUrl('http://127.0.0.1:9999/hook', false).ok).toBe(false);
    expect(checkWebhookUrl('http://127.0.0.1:9999/hook', true).ok).toBe(true);
    expect(checkWebhookUrl('http://10.0.0.1:9999/hook', true).ok).toBe(false);
  });
});
