import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape, storeWithKey, type TestKey } from '#fixtures/api.ts';
import { insertTestPage, pageBody, pagePath, xid } from '#fixtures/content.ts';
import type { Page, PageType } from '#domain/page/page.ts';

type Api = ReturnType<typeof client>;

/**
 * Walks over every page, with and without a type, are the use case's, tested in-process in
 * test/usecase/pages.test.ts; here, the pages as the route answers them.
 */
describe('GET /content/pages', () => {
  let storeId: string;
  let key: TestKey;
  let api: Api;
  let pages: Page[] = [];
  // 31 pages: blog posts at every third position and in a sparse tail, so typed pages must skip.
  const layout: PageType[] = Array.from({ length: 31 }, (_, i) => (i % 3 === 0 && i < 24 ? 'blog' : 'page'));
  beforeAll(async () => {
    storeId = await createStore();
    key = await createKey(storeId, ['content:read', 'content:write']);
    api = client(key.token);
    for (const type of layout)
      pages.push(await insertTestPage(storeId, key.id, { type, status: pages.length % 2 ? 'published' : 'draft' }));
    pages = pages.sort((a, b) => a.id - b.id);
  });

  it('lists every page in ascending id order, 15 by default, with next_cursor', async () => {
    const res = await api.get('/content/pages');
    expect(res.status).toBe(200);
    expect(res.body.data.map((p: any) => p.id)).toEqual(pages.slice(0, 15).map((p) => p.id));
    expect(res.body.next_cursor).toBe(pages[14]!.id);
    const first = res.body.data[0];
    expect(Object.keys(first)).toEqual([
      'id',
      'external_id',
      'type',
      'title',
      'slug',
      'body',
      'status',
      'has_unpublished_changes',
      'published_at',
      'created_at',
      'updated_at',
    ]);
    expect(first).toMatchObject({
      id: pages[0]!.id,
      external_id: pages[0]!.external_id,
      type: pages[0]!.type,
      slug: pages[0]!.slug,
      status: pages[0]!.status,
    });
  });

  it('fills a typed page even when matches are sparse, and says null when none follow', async () => {
    const blogs = pages.filter((p) => p.type === 'blog');
    const res = await api.get(`/content/pages?type=blog&cursor=${blogs[5]!.id}&limit=2`);
    expect(res.body.data.map((p: any) => p.id)).toEqual(blogs.slice(6, 8).map((p) => p.id));
    expect(res.body.next_cursor).toBeNull();
  });

  it('answers an empty page past the last id', async () => {
    const res = await api.get(`/content/pages?cursor=${pages.at(-1)!.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: [], next_cursor: null });
    expect((await api.get('/content/pages?cursor=999999999999')).body).toEqual({ data: [], next_cursor: null });
    expect((await api.get('/content/pages?cursor=9007199254740991')).body).toEqual({ data: [], next_cursor: null });
  });

  it('sets next_cursor to null on a full last page', async () => {
    const res = await api.get(`/content/pages?cursor=${pages.at(-4)!.id}&limit=3`);
    expect(res.body.data).toHaveLength(3);
    expect(res.body.next_cursor).toBeNull();
  });

  it("shows every page of the store, with another key's external ids as null", async () => {
    const other = client((await createKey(storeId, ['content:read', 'content:write'])).token);
    const own = (await other.put(pagePath(xid('other')), pageBody())).body.data;
    const res = await other.get(`/content/pages?cursor=${pages.at(-2)!.id}`);
    expect(res.body.data.map((p: any) => [p.id, p.external_id])).toEqual([
      [pages.at(-1)!.id, null],
      [own.id, own.external_id],
    ]);
    const mine = await api.get(`/content/pages?cursor=${pages.at(-1)!.id}`);
    expect(mine.body.data).toEqual([{ ...own, external_id: null }]);
  });

  it('does not show pages of another store', async () => {
    const elsewhere = await storeWithKey(['content:read']);
    expect((await elsewhere.client.get('/content/pages')).body).toEqual({ data: [], next_cursor: null });
  });
});

describe('GET /content/pages: refusals', () => {
  let storeId: string;
  let api: Api;
  beforeAll(async () => {
    storeId = await createStore();
    api = client((await createKey(storeId, ['content:read'])).token);
  });

  it.each([
    ['limit', 'limit=0'],
    ['limit', 'limit=51'],
    ['limit', 'limit=abc'],
    ['limit', 'limit=1.5'],
    ['limit', 'limit='],
    ['cursor', 'cursor=-1'],
    ['cursor', 'cursor=x'],
    ['cursor', 'cursor=1e3'],
    ['type', 'type=post'],
    ['type', 'type=Blog'],
    ['type', 'type='],
    ['page', 'page=2'],
    ['filter[type]', 'filter[type]=blog'],
  ])('answers 422 validation_failed naming %s for ?%s', async (field, query) => {
    const res = await api.get(`/content/pages?${query}`);
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
  });

  it('answers 401 without a valid key', async () => {
    for (const token of [null, 'not-a-key']) {
      const res = await client(token).get('/content/pages');
      expect(res.status).toBe(401);
      expectErrorShape(res.body);
    }
  });

  it('answers 403 naming content:read to a key without it (content:write is not enough)', async () => {
    const writerOnly = client((await createKey(storeId, ['content:write', 'catalog:read'])).token);
    const res = await writerOnly.get('/content/pages');
    expect(res.status).toBe(403);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'forbidden' });
    expect(res.body.message).toContain('content:read');
  });
});
