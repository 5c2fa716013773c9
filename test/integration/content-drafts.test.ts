import { beforeAll, describe, expect, it } from 'vitest';
import { client, createKey, expectErrorShape, storeWithKey } from '#fixtures/api.ts';
import { idem, pageBody, pagePath, publishPath, slug, storeItems, unpublishPath, xid } from '#fixtures/content.ts';

type Api = ReturnType<typeof client>;

/** Published pages stay live while edited (docs/contract.md#pages): PUT stores a revision, publish puts it live. */
describe('published pages stay live while edited', () => {
  let storeId: string;
  let api: Api;
  let token: string;
  beforeAll(async () => {
    const s = await storeWithKey(['content:read', 'content:write']);
    storeId = s.storeId;
    api = s.client;
    token = s.key.token;
  });

  const listed = async (id: number, version?: string) => {
    const res = await api.get(`/content/pages?cursor=${id - 1}&limit=1${version ? `&version=${version}` : ''}`);
    expect(res.status).toBe(200);
    return res.body.data[0];
  };

  async function publishedPage() {
    const external = xid();
    const live = pageBody({ title: 'Shipping', slug: slug('ship'), body: '<p>Old body</p>' });
    expect((await api.put(pagePath(external), live)).status).toBe(200);
    const published = await api.post(publishPath(external), {}, { 'Idempotency-Key': idem() });
    expect(published.status).toBe(200);
    return { external, live, page: published.body.data };
  }

  it('a PUT on a published page keeps the old body listed until the next publish; ?version=draft shows the edit', async () => {
    const { external, live, page } = await publishedPage();
    expect(page).toMatchObject({ status: 'published', has_unpublished_changes: false });

    const edit = { ...live, title: 'Shipping (fixed)', body: '<p>New body</p>' };
    const saved = await api.put(pagePath(external), edit);
    expect(saved.status).toBe(200);
    // The answer shows what was saved, and that it is not live yet.
    expect(saved.body.data).toMatchObject({
      ...edit,
      status: 'published',
      has_unpublished_changes: true,
      published_at: page.published_at,
    });

    const shown = await listed(page.id);
    expect(shown).toMatchObject({
      title: 'Shipping',
      body: '<p>Old body</p>',
      status: 'published',
      has_unpublished_changes: true,
      published_at: page.published_at,
    });
    expect(shown.updated_at).toBe(saved.body.data.updated_at);
    expect(await listed(page.id, 'live')).toEqual(shown);
    expect(await listed(page.id, 'draft')).toEqual({ ...shown, title: 'Shipping (fixed)', body: '<p>New body</p>' });

    const republished = await api.post(publishPath(external), {}, { 'Idempotency-Key': idem() });
    expect(republished.status).toBe(200);
    expect(republished.body.data).toMatchObject({ ...edit, status: 'published', has_unpublished_changes: false });
    expect(republished.body.data.published_at > page.published_at).toBe(true);
    expect(await listed(page.id)).toEqual(republished.body.data);
    expect(await listed(page.id, 'draft')).toEqual(republished.body.data);
    // Published without changes: publish is a no-op again.
    const again = await api.post(publishPath(external), {}, { 'Idempotency-Key': idem() });
    expect(again.body.data).toEqual(republished.body.data);
  });

  it('a save equal to the live version drops the revision; a repeated save writes nothing', async () => {
    const { external, live, page } = await publishedPage();
    const first = await api.put(pagePath(external), { ...live, body: '<p>Edit</p>' });
    const repeat = await api.put(pagePath(external), { ...live, body: '<p>Edit</p>' });
    expect(repeat.body.data).toEqual(first.body.data);
    const back = await api.put(pagePath(external), live);
    expect(back.body.data).toMatchObject({
      ...live,
      status: 'published',
      has_unpublished_changes: false,
      published_at: page.published_at,
    });
    expect(await listed(page.id, 'draft')).toEqual(await listed(page.id));
  });

  it('unpublish takes the page offline; the pending edit becomes its content for the next publish', async () => {
    const { external, live, page } = await publishedPage();
    await api.put(pagePath(external), { ...live, body: '<p>Pending</p>' });
    const off = await api.post(unpublishPath(external), {});
    expect(off.status).toBe(200);
    expect(off.body.data).toMatchObject({
      status: 'unpublished',
      body: '<p>Pending</p>',
      has_unpublished_changes: false,
      published_at: page.published_at,
    });
    // An unpublished page is saved as a draft, as before.
    const saved = await api.put(pagePath(external), { ...live, body: '<p>Later</p>' });
    expect(saved.body.data).toMatchObject({ status: 'draft', body: '<p>Later</p>', has_unpublished_changes: false });
  });

  it('a revision with a new slug claims it at once (409 for a taken one) and releases the old slug when published', async () => {
    const { external, live, page } = await publishedPage();
    const other = await publishedPage();
    const taken = await api.put(pagePath(external), { ...live, slug: other.live.slug });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: 'slug_taken', field: 'slug' });
    expect(await listed(page.id)).toMatchObject({ slug: live.slug, has_unpublished_changes: false });

    const moved = slug('moved');
    expect((await api.put(pagePath(external), { ...live, slug: moved })).body.data).toMatchObject({
      slug: moved,
      has_unpublished_changes: true,
    });
    expect(await listed(page.id)).toMatchObject({ slug: live.slug });
    // While the revision is pending both slugs belong to this page.
    const claims = async () =>
      (await storeItems(storeId, 'SLUG#'))
        .filter((i) => i.page_id === page.id)
        .map((i) => i.sk)
        .sort();
    expect(await claims()).toEqual([`SLUG#${live.slug}`, `SLUG#${moved}`].sort());
    const squatter = await api.put(pagePath(xid()), pageBody({ slug: live.slug }));
    expect(squatter.status).toBe(409);

    await api.post(publishPath(external), {}, { 'Idempotency-Key': idem() });
    expect(await listed(page.id)).toMatchObject({ slug: moved, has_unpublished_changes: false });
    expect(await claims()).toEqual([`SLUG#${moved}`]);
    expect((await api.put(pagePath(xid()), pageBody({ slug: live.slug }))).status).toBe(200);
  });

  describe('?version on GET /content/pages', () => {
    it('401 without a valid key, whatever the version', async () => {
      for (const token of [null, 'not-a-key']) {
        const res = await client(token).get('/content/pages?version=draft');
        expect(res.status).toBe(401);
        expectErrorShape(res.body);
      }
    });

    it('403 for a key without content:read, naming the ability', async () => {
      const key = await createKey(storeId, ['content:write', 'catalog:read']);
      const res = await client(key.token).get('/content/pages?version=draft');
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'forbidden', message: expect.stringContaining('content:read') });
    });

    it('404 for an unknown path with the parameter', async () => {
      const res = await client(token, { undocumented: true }).get('/content/page?version=draft');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found' });
    });

    it.each(['drafts', 'DRAFT', '', 'published'])('422 validation_failed on version for %j', async (value) => {
      const res = await api.get(`/content/pages?version=${encodeURIComponent(value)}`);
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ code: 'validation_failed', field: 'version' });
    });

    it('a draft page is the same in both versions; drafts of another key show with external_id null', async () => {
      const external = xid();
      const draft = (await api.put(pagePath(external), pageBody())).body.data;
      expect(await listed(draft.id, 'draft')).toEqual(await listed(draft.id));
      const other = client((await createKey(storeId, ['content:read'])).token);
      const res = await other.get(`/content/pages?cursor=${draft.id - 1}&limit=1&version=draft`);
      expect(res.body.data[0]).toMatchObject({ id: draft.id, external_id: null, has_unpublished_changes: false });
    });
  });
});
