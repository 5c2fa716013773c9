import { describe, expect, it } from 'vitest';
import { baseUrl as base, storeWithKey } from '#fixtures/api.ts';

describe('request bodies', () => {
  it('answers 413 payload_too_large to a body over 1 MiB and creates nothing', async () => {
    const { client: api } = await storeWithKey(['catalog:write', 'catalog:read']);
    const body = JSON.stringify({ name: 'Big', price: 1, description: 'x'.repeat(1024 * 1024) });
    const res = await api.put('/catalog/products/big-1', body);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ code: 'payload_too_large', message: expect.any(String), field: null });
    expect((await api.get('/products')).body.total).toBe(0);
  });

  it('accepts a body of just under 1 MiB up to the field limits (the limit is on bytes, not on fields)', async () => {
    const { client: api } = await storeWithKey(['catalog:write']);
    // 65 535 four-byte characters: 262 140 bytes of description, valid by the field's own bound.
    const res = await api.put('/catalog/products/wide-1', { name: 'Wide', price: 1, description: '😀'.repeat(65_535) });
    expect(res.status).toBe(200);
  });

  it.each([
    ['truncated JSON', '{"name": "x", "price": 1'],
    ['a JSON array', '[{"name": "x"}]'],
    ['a JSON string', '"hello"'],
    ['JSON null', 'null'],
    ['an empty body', ''],
  ])('answers 400 invalid_json to %s', async (_, body) => {
    const { client: api } = await storeWithKey(['catalog:write']);
    const res = await api.put('/catalog/products/bad-json', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: 'invalid_json', message: expect.any(String), field: null });
  });
});

describe('X-Request-Id', () => {
  it("is on every answer, the gateway's own and a handler's, success or error, and differs per request", async () => {
    const baseUrl = base();
    const { client: api, key } = await storeWithKey(['catalog:read']);
    const token = key.token;
    const answers = [
      await fetch(`${baseUrl}/products`), // 401, answered before any key
      await fetch(`${baseUrl}/no-such-route`, { headers: { Authorization: `Bearer ${token}` } }), // 404
      await fetch(`${baseUrl}/products`, { method: 'DELETE', headers: { Authorization: `Bearer ${token}` } }), // 405
      await fetch(`${baseUrl}/orders`, { headers: { Authorization: `Bearer ${token}` } }), // 403
      await fetch(`${baseUrl}/products?limit=0`, { headers: { Authorization: `Bearer ${token}` } }), // 422
      await fetch(`${baseUrl}/products`, { headers: { Authorization: `Bearer ${token}` } }), // 200
      await fetch(`${baseUrl}/openapi.json`), // public document
    ];
    expect(answers.map((r) => r.status)).toEqual([401, 404, 405, 403, 422, 200, 200]);
    const ids = answers.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^\S+$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await api.get('/products')).headers.get('x-request-id')).not.toBe(ids[5]);
  });
});
