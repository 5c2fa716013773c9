import { describe, expect, it } from 'vitest';
import { adminCommand, client, createKey, createStore, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { ABILITIES } from '#domain/key/abilities.ts';
import { API_ROUTES } from '#http/api-routes.ts';

const unauthenticated = { code: 'unauthenticated', message: expect.any(String), field: null };

describe('authentication', () => {
  it('answers 401 without an Authorization header', async () => {
    const res = await client(null).get('/products');
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.body).toEqual(unauthenticated);
  });

  it.each([
    ['an unknown token', 'Bearer sia_' + 'A'.repeat(43)],
    ['a malformed token', 'Bearer not-a-token'],
    ['another scheme', 'Basic dXNlcjpwYXNz'],
    ['an empty bearer', 'Bearer '],
  ])('answers 401 for %s', async (_, header) => {
    const res = await client(null).get('/products', { Authorization: header });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthenticated);
  });

  it('accepts the scheme in any case', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const res = await client(null).get('/products', { Authorization: `bearer ${key.token}` });
    expect(res.status).toBe(200);
  });

  it('answers 401 at once after the key is revoked', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    expect((await api.get('/products')).status).toBe(200);
    const revoked = await adminCommand<{ status: string }>('keys revoke', { id: key.id });
    expect(revoked.status).toBe('revoked');
    const res = await api.get('/products');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthenticated);
  });

  it('answers 401 for the rotated-away token and 200 for the new one, keeping the key id', async () => {
    const { key, client: api } = await storeWithKey(['catalog:read']);
    expect((await api.get('/products')).status).toBe(200);
    const rotated = await adminCommand<{ id: number; token: string }>('keys rotate', { id: key.id });
    expect(rotated.id).toBe(key.id);
    expect(rotated.token).not.toBe(key.token);
    expect((await api.get('/products')).status).toBe(401);
    expect((await client(rotated.token).get('/products')).status).toBe(200);
  });

  it('records last_used_at and lists keys without secrets', async () => {
    const { storeId, key, client: api } = await storeWithKey(['catalog:read']);
    const before = await adminCommand<{ data: Record<string, unknown>[] }>('keys list', { store: storeId });
    expect(before.data[0]).toMatchObject({ id: key.id, status: 'active', last_used_at: null });
    await api.get('/products');
    const after = await adminCommand<{ data: Record<string, unknown>[] }>('keys list', { store: storeId });
    expect(after.data[0]!.last_used_at).toMatch(/Z$/);
    for (const k of after.data) {
      expect(k).not.toHaveProperty('token');
      expect(k).not.toHaveProperty('token_hash');
      expect(k).not.toHaveProperty('webhook_secret');
    }
  });
});

describe('abilities', () => {
  const paramValue = { id: '1', external_id: 'x-1', reference: 'R-1' } as Record<string, string>;
  // Routes without an ability (MCP) admit any valid key; test/integration/mcp.test.ts covers their tools.
  const cases = API_ROUTES.filter((r) => r.ability !== null).map((r) => [`${r.method} ${r.path}`, r] as const);

  it.each(cases)('answers 403 naming the ability for %s to a key holding every other ability', async (_, route) => {
    const storeId = await createStore();
    const key = await createKey(
      storeId,
      ABILITIES.filter((a) => a !== route.ability),
    );
    const path = route.path.replace(/\{(\w+)\}/g, (_m, name: string) => paramValue[name] ?? 'x');
    const res = await client(key.token).request(route.method, path, route.method === 'GET' ? undefined : {}, {
      'Idempotency-Key': 'k-1',
    });
    expect(res.status).toBe(403);
    expectErrorShape(res.body);
    expect(res.body.code).toBe('forbidden');
    expect(res.body.message).toContain(route.ability);
  });
});

describe('unknown routes', () => {
  it.each([
    ['GET', '/nothing-here'],
    ['DELETE', '/nothing-here/1'],
    ['GET', '/products/1/extra'],
  ])('answers 404 in the contract shape for %s %s', async (method, path) => {
    const { key } = await storeWithKey();
    const res = await client(key.token, { undocumented: true }).request(method, path);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ code: 'not_found', message: expect.any(String), field: null });
  });
});
