import { describe, expect, it } from 'vitest';
import { storeWithKey } from '../fixtures/api.ts';

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
