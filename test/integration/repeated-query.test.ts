import { describe, expect, it } from 'vitest';
import { expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { snapshot } from '#fixtures/dry-run.ts';

/**
 * Every query parameter of the API is single-valued: one sent twice is ambiguous, so it is 422
 * naming it, and the request does nothing (API Gateway itself would hand the handler the last value).
 */
describe('a repeated query parameter', () => {
  it('?dry_run=true&dry_run=false on a write is 422 naming dry_run, and nothing is written', async () => {
    const { storeId, key, client: api } = await storeWithKey();
    const before = await snapshot(storeId, key.id);
    for (const query of ['dry_run=true&dry_run=false', 'dry_run=false&dry_run=true', 'dry_run=false&dry_run=false']) {
      const res = await api.put(`/catalog/products/r-1?${query}`, { name: 'Oak', price: 1000, sku: 'SKU-OAK' });
      expect(res.status, query).toBe(422);
      expectErrorShape(res.body);
      expect(res.body).toMatchObject({ code: 'validation_failed', field: 'dry_run' });
    }
    expect((await api.get('/catalog/products/r-1')).status).toBe(404);
    expect(await snapshot(storeId, key.id)).toEqual(before);
  });

  it('exclude_own and limit given twice on GET /events are 422 naming each; once they are answered', async () => {
    const { client: api } = await storeWithKey();
    for (const [query, field] of [
      ['exclude_own=true&exclude_own=false', 'exclude_own'],
      ['limit=5&limit=50', 'limit'],
    ] as const) {
      const res = await api.get(`/events?${query}`);
      expect(res.status, query).toBe(422);
      expectErrorShape(res.body);
      expect(res.body).toMatchObject({ code: 'validation_failed', field });
    }
    expect((await api.get('/events?exclude_own=true&limit=5')).status).toBe(200);
  });
});
