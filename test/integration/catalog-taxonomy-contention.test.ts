import { newContext } from '#shared/context.ts';
import { describe, expect, it } from 'vitest';
import { client, storeWithKey } from '#fixtures/api.ts';
import { putTag } from '#app/taxonomy.ts';
import { keys } from '#db/keys.ts';
import { ownGateway, winEveryRoundOf } from '#fixtures/racing-writer.ts';

/**
 * A rename that keeps losing to other writers of its category or tag is the tenant's own
 * contention, as for a product (docs/catalog-writes.md, "One hot product"): 429 `resource_busy`
 * with Retry-After, nothing written, never a 500.
 */
describe('a category or tag write that keeps losing to other writers', () => {
  const base = ownGateway();

  it('answers PUT of a category 429 resource_busy with Retry-After and leaves its name', async () => {
    const { key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const api = client(key.token, { base: base() });
    const path = '/catalog/categories/hot-cat';
    expect((await api.put(path, { name: 'Chairs' })).status).toBe(200);

    const racing = winEveryRoundOf(keys.category(key.id, 'hot-cat'));
    let res: Awaited<ReturnType<typeof api.put>>;
    try {
      res = await api.put(path, { name: 'Stools' });
    } finally {
      racing.stop();
    }
    expect(res.status, res.text).toBe(429);
    expect(res.body).toMatchObject({ code: 'resource_busy', field: null });
    expect(res.headers.get('retry-after')).toBe('1');
    expect(racing.won()).toBeGreaterThanOrEqual(1);
    // Nothing was written: the same PUT once the other writer is gone renames it.
    const again = await api.put(path, { name: 'Stools' });
    expect(again.status).toBe(200);
    expect(again.body.data.name).toBe('Stools');
  });

  it('returns the refusal from the use case as a value, not an exception', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const caller = { storeId, keyId: key.id };
    expect(await putTag(newContext(), caller, 'hot-tag', 'sale')).toMatchObject({ value: 'sale' });
    const racing = winEveryRoundOf(keys.tag(key.id, 'hot-tag'));
    try {
      expect(await putTag(newContext(), caller, 'hot-tag', 'clearance')).toMatchObject({
        kind: 'refused',
        code: 'resource_busy',
        retryAfterSeconds: 1,
      });
    } finally {
      racing.stop();
    }
  });
});
