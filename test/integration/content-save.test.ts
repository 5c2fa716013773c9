import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { idem, pageBody, pagePath, publishPath, slug, storeItems, xid } from '#fixtures/content.ts';
import { BODY_MAX_BYTES } from '#domain/page/page-write.ts';

type Api = ReturnType<typeof client>;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const writer = async (storeId: string) => client((await createKey(storeId, ['content:read', 'content:write'])).token);

describe('PUT /content/pages/{external_id}: create and update', () => {
  let storeId: string;
  let api: Api;
  beforeAll(async () => {
    storeId = await createStore();
    api = await writer(storeId);
  });

  it('creates a draft page and answers with the record', async () => {
    const id = xid();
    const body = pageBody({ type: 'blog', title: 'Spring 2026' });
    const res = await api.put(pagePath(id), body);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    const page = res.body.data;
    expect(Object.keys(page)).toEqual([
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
    expect(page).toMatchObject({
      external_id: id,
      type: 'blog',
      title: 'Spring 2026',
      slug: body.slug,
      body: body.body,
      status: 'draft',
      has_unpublished_changes: false,
      published_at: null,
    });
    expect(Number.isInteger(page.id)).toBe(true);
    expect(page.created_at).toMatch(ISO_MS);
    expect(page.updated_at).toBe(page.created_at);
  });

  it('updates the same page on the next PUT: every field replaced, created_at kept, updated_at moved', async () => {
    const id = xid();
    const first = (await api.put(pagePath(id), pageBody())).body.data;
    const next = pageBody({ type: 'blog', title: 'Renamed', body: '<p>new</p>' });
    const res = await api.put(pagePath(id), next);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: first.id,
      external_id: id,
      type: 'blog',
      title: 'Renamed',
      slug: next.slug,
      body: '<p>new</p>',
      status: 'draft',
      created_at: first.created_at,
    });
    expect(res.body.data.updated_at > first.updated_at).toBe(true);
    const stored = (await storeItems(storeId, 'PAGE#')).filter((p) => p.external_id === id);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ page_type: 'blog', title: 'Renamed', updated_at: res.body.data.updated_at });
  });

  it('a PUT that changes nothing writes nothing: updated_at stays', async () => {
    const id = xid();
    const body = pageBody();
    const first = await api.put(pagePath(id), body);
    const again = await api.put(pagePath(id), body);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
  });

  it('saving a published page never publishes the save and never takes the live version offline; published_at stays', async () => {
    const id = xid();
    const body = pageBody();
    await api.put(pagePath(id), body);
    const published = await api.post(publishPath(id), undefined, { 'Idempotency-Key': idem() });
    expect(published.body.data.status).toBe('published');
    const saved = await api.put(pagePath(id), { ...body, body: '<p>edited</p>' });
    expect(saved.status).toBe(200);
    expect(saved.body.data).toMatchObject({
      status: 'published',
      has_unpublished_changes: true,
      body: '<p>edited</p>',
      published_at: published.body.data.published_at,
    });
    expect(saved.body.data.updated_at > published.body.data.updated_at).toBe(true);
    const listed = await api.get(`/content/pages?cursor=${saved.body.data.id - 1}&limit=1`);
    expect(listed.body.data[0]).toEqual({ ...saved.body.data, body: published.body.data.body });
  });

  it('sanitizes the body: what is stored and served has no script, handler or javascript: URL', async () => {
    const id = xid();
    const dirty =
      '<h2 onclick="alert(1)">Hi</h2><script>alert(1)</script><p>ok <a href="javascript:alert(1)">x</a> ' +
      '<a href="https://example.com/">y</a></p><img src=x onerror=alert(1)><img src="https://cdn.example.com/a.png" alt="a">' +
      '<iframe src="https://evil.example/"></iframe><style>p{}</style>';
    const res = await api.put(pagePath(id), pageBody({ body: dirty }));
    expect(res.status).toBe(200);
    const clean =
      '<h2>Hi</h2><p>ok x <a href="https://example.com/">y</a></p><img src="https://cdn.example.com/a.png" alt="a" />';
    expect(res.body.data.body).toBe(clean);
    const [stored] = (await storeItems(storeId, 'PAGE#')).filter((p) => p.external_id === id);
    expect(stored!.body).toBe(clean);
  });

  it('moves a page between the type lists when its type changes', async () => {
    const id = xid();
    const created = (await api.put(pagePath(id), pageBody({ type: 'page' }))).body.data;
    const inList = async (type: string) =>
      (await api.get(`/content/pages?type=${type}&cursor=${created.id - 1}&limit=1`)).body.data.some(
        (p: any) => p.id === created.id,
      );
    expect([await inList('page'), await inList('blog')]).toEqual([true, false]);
    await api.put(pagePath(id), pageBody({ type: 'blog', slug: created.slug }));
    expect([await inList('page'), await inList('blog')]).toEqual([false, true]);
  });

  it('accepts an external id that arrives percent-encoded', async () => {
    const res = await api.put('/content/pages/erp%3A42-' + Date.now(), pageBody());
    expect(res.status).toBe(200);
    expect(res.body.data.external_id).toMatch(/^erp:42-\d+$/);
  });
});

describe('PUT /content/pages/{external_id}: slugs', () => {
  let storeId: string;
  beforeAll(async () => {
    storeId = await createStore();
  });

  it('refuses a slug another page of the store has, also from another key: 409 slug_taken', async () => {
    const a = await writer(storeId);
    const b = await writer(storeId);
    const s = slug();
    expect((await a.put(pagePath(xid()), pageBody({ slug: s }))).status).toBe(200);
    for (const [api, id] of [
      [a, xid()],
      [b, xid()],
    ] as const) {
      const res = await api.put(pagePath(id), pageBody({ slug: s }));
      expect(res.status).toBe(409);
      expectErrorShape(res.body);
      expect(res.body).toMatchObject({ code: 'slug_taken', field: 'slug' });
      expect(res.body.message).toContain(s);
    }
    // The refused creates left nothing behind.
    const pages = (await storeItems(storeId, 'PAGE#')).filter((p) => p.slug === s);
    expect(pages).toHaveLength(1);
  });

  it('refuses moving an existing page onto a taken slug and leaves the page as it was', async () => {
    const api = await writer(storeId);
    const taken = slug();
    await api.put(pagePath(xid()), pageBody({ slug: taken }));
    const id = xid();
    const mine = (await api.put(pagePath(id), pageBody())).body.data;
    const res = await api.put(pagePath(id), pageBody({ slug: taken, title: 'Changed' }));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('slug_taken');
    const listed = (await api.get(`/content/pages?cursor=${mine.id - 1}&limit=1`)).body.data[0];
    expect(listed).toEqual(mine);
  });

  it('lets another store use the same slug', async () => {
    const s = slug();
    const one = await storeWithKey(['content:write']);
    const two = await storeWithKey(['content:write']);
    expect((await one.client.put(pagePath(xid()), pageBody({ slug: s }))).status).toBe(200);
    expect((await two.client.put(pagePath(xid()), pageBody({ slug: s }))).status).toBe(200);
  });

  it('a slug change frees the old slug, and the page keeps its own slug on re-save', async () => {
    const api = await writer(storeId);
    const [s1, s2] = [slug(), slug()];
    const p1 = xid();
    const first = (await api.put(pagePath(p1), pageBody({ slug: s1 }))).body.data;
    expect((await api.put(pagePath(p1), pageBody({ slug: s1, title: 'Same slug' }))).status).toBe(200);
    expect((await api.put(pagePath(p1), pageBody({ slug: s2 }))).body.data).toMatchObject({ id: first.id, slug: s2 });
    const p2 = await api.put(pagePath(xid()), pageBody({ slug: s1 }));
    expect(p2.status).toBe(200);
    expect((await api.put(pagePath(xid()), pageBody({ slug: s2 }))).status).toBe(409);
    const claims = (await storeItems(storeId, 'SLUG#')).filter((c) => c.sk === `SLUG#${s1}` || c.sk === `SLUG#${s2}`);
    expect(claims.map((c) => [c.sk, c.page_id]).sort()).toEqual(
      [
        [`SLUG#${s1}`, p2.body.data.id],
        [`SLUG#${s2}`, first.id],
      ].sort(),
    );
  });

  it('keeps one slug claim per page: every claim of the store names a page that has that slug', async () => {
    const pages = await storeItems(storeId, 'PAGE#');
    const claims = await storeItems(storeId, 'SLUG#');
    expect(claims).toHaveLength(pages.length);
    const byId = new Map(pages.map((p) => [p.id, p]));
    for (const c of claims) expect(`SLUG#${byId.get(c.page_id)?.slug}`).toBe(c.sk);
  });
});

describe('PUT /content/pages/{external_id}: refusals', () => {
  let storeId: string;
  let api: Api;
  beforeAll(async () => {
    storeId = await createStore();
    api = await writer(storeId);
  });

  it('answers 401 without a valid key', async () => {
    for (const token of [null, 'not-a-key']) {
      const res = await client(token).put(pagePath(xid()), pageBody());
      expect(res.status).toBe(401);
      expectErrorShape(res.body);
      expect(res.body.code).toBe('unauthenticated');
    }
  });

  it('answers 403 naming content:write to a key without it (content:read is not enough)', async () => {
    const reader = client((await createKey(storeId, ['content:read', 'catalog:write'])).token);
    const res = await reader.put(pagePath(xid()), pageBody());
    expect(res.status).toBe(403);
    expectErrorShape(res.body);
    expect(res.body.code).toBe('forbidden');
    expect(res.body.message).toContain('content:write');
  });

  it.each([
    ['external_id', 'bad id!', pageBody()],
    ['external_id', 'x'.repeat(129), pageBody()],
    ['type', 'ok-1', pageBody({ type: 'post' })],
    ['type', 'ok-2', { title: 'a', slug: 'a', body: '' }],
    ['title', 'ok-3', pageBody({ title: '' })],
    ['title', 'ok-4', pageBody({ title: 'x'.repeat(256) })],
    ['title', 'ok-5', pageBody({ title: null })],
    ['slug', 'ok-6', pageBody({ slug: 'Not-Lower' })],
    ['slug', 'ok-7', pageBody({ slug: 'double--hyphen' })],
    ['slug', 'ok-8', pageBody({ slug: '-lead' })],
    ['slug', 'ok-9', pageBody({ slug: 'x'.repeat(201) })],
    ['body', 'ok-10', pageBody({ body: 42 })],
    ['body', 'ok-11', pageBody({ body: undefined })],
    ['body', 'ok-12', pageBody({ body: 'x'.repeat(BODY_MAX_BYTES + 1) })],
    ['body', 'ok-15', pageBody({ body: '<em>'.repeat(200_000) })],
    ['status', 'ok-13', pageBody({ status: 'published' })],
    ['published_at', 'ok-14', pageBody({ published_at: null })],
  ])('answers 422 validation_failed naming %s, and writes nothing', async (field, id, body) => {
    const res = await api.put(pagePath(encodeURIComponent(id)), body);
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'validation_failed', field });
    expect(await storeItems(storeId, 'PAGE#')).toHaveLength(0);
  });

  it('answers 400 invalid_json to a body that is not a JSON object', async () => {
    for (const body of ['{"type":', '[1]', '']) {
      const res = await api.request('PUT', pagePath(xid()), body);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_json');
    }
  });
});
