import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape, type ApiResponse } from '#fixtures/api.ts';

function expectError(res: ApiResponse, status: number, code: string, field?: string | null) {
  expect(res.status).toBe(status);
  expectErrorShape(res.body);
  expect(res.body.code).toBe(code);
  if (field !== undefined) expect(res.body.field).toBe(field);
}

const page = (title: string, slug: string) => ({ type: 'blog', title, slug, body: '<p>Hello</p>' });

/** If-Match / If-None-Match on PUT /content/pages/{external_id} (docs/content.md#conditional-saves). */
describe('conditional page saves', () => {
  let api: ReturnType<typeof client>;
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
    api = client((await createKey(storeId, ['content:read', 'content:write'])).token);
  });

  it('answers the ETag of the draft and saves over it only while it is current', async () => {
    const first = await api.put('/content/pages/cp-1', page('One', 'cp-one'));
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{64}"$/);
    const second = await api.put('/content/pages/cp-1', page('Two', 'cp-one'), { 'If-Match': etag });
    expect(second.status).toBe(200);
    expect(second.headers.get('etag')).not.toBe(etag);
    expectError(
      await api.put('/content/pages/cp-1', page('Three', 'cp-one'), { 'If-Match': etag }),
      412,
      'precondition_failed',
      'If-Match',
    );
    expectError(
      await api.put('/content/pages/cp-1?dry_run=true', page('Three', 'cp-one'), { 'If-Match': etag }),
      412,
      'precondition_failed',
      'If-Match',
    );
    // The page still holds the second save.
    const again = await api.put('/content/pages/cp-1', page('Two', 'cp-one'));
    expect(again.body.data.title).toBe('Two');
    expect(again.headers.get('etag')).toBe(second.headers.get('etag'));
  });

  it('creates only with If-None-Match: *; If-Match on a page that does not exist is 412 and creates nothing', async () => {
    expectError(
      await api.put('/content/pages/cp-2', page('New', 'cp-two'), { 'If-Match': '*' }),
      412,
      'precondition_failed',
      'If-Match',
    );
    const listed = await api.get('/content/pages?version=draft&limit=50');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((p: { external_id: string }) => p.external_id)).not.toContain('cp-2');
    expect((await api.put('/content/pages/cp-2', page('New', 'cp-two'), { 'If-None-Match': '*' })).status).toBe(200);
    expectError(
      await api.put('/content/pages/cp-2', page('Newer', 'cp-two'), { 'If-None-Match': '*' }),
      412,
      'precondition_failed',
      'If-None-Match',
    );
  });

  it('lets one of 10 savers holding the same ETag through', async () => {
    const base = await api.put('/content/pages/cp-3', page('Base', 'cp-three'));
    const etag = base.headers.get('etag')!;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.put('/content/pages/cp-3', page(`Racer ${i}`, 'cp-three'), { 'If-Match': etag }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(9).fill(412)]);
  });

  it('refuses a malformed If-Match with 422 naming it, and a key without content:write with 403', async () => {
    expectError(
      await api.put('/content/pages/cp-4', page('Bad', 'cp-four'), { 'If-Match': 'bare' }),
      422,
      'validation_failed',
      'If-Match',
    );
    const reader = client((await createKey(storeId, ['content:read'])).token);
    expectError(await reader.put('/content/pages/cp-4', page('Bad', 'cp-four'), { 'If-Match': '*' }), 403, 'forbidden');
    expectError(await client(null).put('/content/pages/cp-4', page('Bad', 'cp-four')), 401, 'unauthenticated');
  });
});
