import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { client, createKey, createStore, expectErrorShape, type TestKey } from '#fixtures/api.ts';
import {
  idem,
  insertTestPage,
  pageBody,
  pagePath,
  publishPath,
  storeItems,
  unpublishPath,
  xid,
} from '#fixtures/content.ts';
import type { PageStatus } from '#domain/page/page.ts';

type Api = ReturnType<typeof client>;
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function storedPage(storeId: string, id: number) {
  return (await storeItems(storeId, 'PAGE#')).find((p) => p.id === id)!;
}

describe('publish and unpublish: every transition', () => {
  let storeId: string;
  let key: TestKey;
  let api: Api;
  // A fresh key per test keeps each well inside the per-key rate limit.
  beforeEach(async () => {
    storeId ??= await createStore();
    key = await createKey(storeId, ['content:read', 'content:write']);
    api = client(key.token);
  });
  const seed = (status: PageStatus) => insertTestPage(storeId, key.id, { status });

  it('publish: draft → published, stamping published_at = updated_at', async () => {
    const page = await seed('draft');
    const res = await api.post(publishPath(page.external_id), undefined, { 'Idempotency-Key': idem() });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: page.id,
      status: 'published',
      created_at: page.created_at,
      title: page.title,
      body: page.body,
    });
    expect(res.body.data.published_at).toMatch(ISO_MS);
    expect(res.body.data.published_at).toBe(res.body.data.updated_at);
    expect(res.body.data.updated_at > page.updated_at).toBe(true);
    expect(await storedPage(storeId, page.id)).toMatchObject({
      status: 'published',
      published_at: res.body.data.published_at,
    });
  });

  it('publish: unpublished → published, with a new published_at', async () => {
    const page = await seed('unpublished');
    const res = await api.post(publishPath(page.external_id), {}, { 'Idempotency-Key': idem() });
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe('published');
    expect(res.body.data.published_at > page.published_at!).toBe(true);
  });

  it('publish: published → 200 no-op, nothing written', async () => {
    const page = await seed('published');
    const res = await api.post(publishPath(page.external_id), undefined, { 'Idempotency-Key': idem() });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      status: 'published',
      published_at: page.published_at,
      updated_at: page.updated_at,
    });
  });

  it('unpublish: published → unpublished, keeping published_at', async () => {
    const page = await seed('published');
    const res = await api.post(unpublishPath(page.external_id));
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: page.id, status: 'unpublished', published_at: page.published_at });
    expect(res.body.data.updated_at > page.updated_at).toBe(true);
    expect((await storedPage(storeId, page.id)).status).toBe('unpublished');
  });

  it('unpublish: unpublished → 200 no-op, nothing written', async () => {
    const page = await seed('unpublished');
    const res = await api.post(unpublishPath(page.external_id), {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'unpublished', updated_at: page.updated_at });
  });

  it('unpublish: draft → 409 invalid_transition, nothing written', async () => {
    const page = await seed('draft');
    const res = await api.post(unpublishPath(page.external_id));
    expect(res.status).toBe(409);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'invalid_transition', field: null });
    expect(res.body.message).toContain('draft');
    expect(await storedPage(storeId, page.id)).toMatchObject({ status: 'draft', updated_at: page.updated_at });
  });

  it('a full cycle through the API: save → publish → unpublish → publish → save (still published, with a revision)', async () => {
    const id = xid();
    const body = pageBody();
    const statuses: string[] = [];
    statuses.push((await api.put(pagePath(id), body)).body.data.status);
    statuses.push((await api.post(publishPath(id), undefined, { 'Idempotency-Key': idem() })).body.data.status);
    statuses.push((await api.post(unpublishPath(id))).body.data.status);
    statuses.push((await api.post(publishPath(id), undefined, { 'Idempotency-Key': idem() })).body.data.status);
    const edited = (await api.put(pagePath(id), { ...body, title: 'Edited' })).body.data;
    statuses.push(edited.status);
    expect(statuses).toEqual(['draft', 'published', 'unpublished', 'published', 'published']);
    expect(edited.has_unpublished_changes).toBe(true);
  });

  it('accepts and ignores an Idempotency-Key on unpublish', async () => {
    const page = await seed('published');
    const k = idem();
    const first = await api.post(unpublishPath(page.external_id), undefined, { 'Idempotency-Key': k });
    await api.post(publishPath(page.external_id), undefined, { 'Idempotency-Key': idem() });
    const second = await api.post(unpublishPath(page.external_id), undefined, { 'Idempotency-Key': k });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.data.status).toBe('unpublished');
    expect(second.body.data.updated_at > first.body.data.updated_at).toBe(true);
  });
});

describe('publish: Idempotency-Key (docs/contract.md#idempotency)', () => {
  let storeId: string;
  let key: TestKey;
  let api: Api;
  beforeEach(async () => {
    storeId ??= await createStore();
    key = await createKey(storeId, ['content:read', 'content:write']);
    api = client(key.token);
  });

  it('replays the first answer byte for byte, even after the page moved on', async () => {
    const page = await insertTestPage(storeId, key.id);
    const k = idem();
    const first = await api.post(publishPath(page.external_id), undefined, { 'Idempotency-Key': k });
    expect(first.status).toBe(200);
    await api.post(unpublishPath(page.external_id));
    // No body and `{}` are the same request.
    const again = await api.post(publishPath(page.external_id), {}, { 'Idempotency-Key': k });
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect((await storedPage(storeId, page.id)).status).toBe('unpublished');
  });

  it('answers 422 idempotency_key_reused to the same key with another body, changing nothing', async () => {
    const page = await insertTestPage(storeId, key.id);
    const k = idem();
    await api.post(publishPath(page.external_id), undefined, { 'Idempotency-Key': k });
    await api.post(unpublishPath(page.external_id));
    const res = await api.post(publishPath(page.external_id), { note: 'again' }, { 'Idempotency-Key': k });
    expect(res.status).toBe(422);
    expectErrorShape(res.body);
    expect(res.body).toMatchObject({ code: 'idempotency_key_reused', field: 'Idempotency-Key' });
    expect((await storedPage(storeId, page.id)).status).toBe('unpublished');
  });

  it('scopes the key to the page (path) and to the API key', async () => {
    const [a, b] = [await insertTestPage(storeId, key.id), await insertTestPage(storeId, key.id)];
    const k = idem();
    const ra = await api.post(publishPath(a.external_id), undefined, { 'Idempotency-Key': k });
    const rb = await api.post(publishPath(b.external_id), undefined, { 'Idempotency-Key': k });
    expect([ra.body.data.id, rb.body.data.id]).toEqual([a.id, b.id]);
    expect(rb.body.data.status).toBe('published');
  });

  it('answers 400 idempotency_key_required without the header (or with an empty one), and changes nothing', async () => {
    const page = await insertTestPage(storeId, key.id);
    for (const headers of [{}, { 'Idempotency-Key': '' }, { 'Idempotency-Key': '   ' }] as Record<string, string>[]) {
      const res = await api.post(publishPath(page.external_id), undefined, headers);
      expect(res.status).toBe(400);
      expectErrorShape(res.body);
      expect(res.body).toMatchObject({ code: 'idempotency_key_required', field: 'Idempotency-Key' });
    }
    expect((await storedPage(storeId, page.id)).status).toBe('draft');
  });

  it('replays a 404 even after a page with that external id was created', async () => {
    const id = xid();
    const k = idem();
    const first = await api.post(publishPath(id), undefined, { 'Idempotency-Key': k });
    expect(first.status).toBe(404);
    await api.put(pagePath(id), pageBody());
    const again = await api.post(publishPath(id), undefined, { 'Idempotency-Key': k });
    expect(again.status).toBe(404);
    expect(again.text).toBe(first.text);
  });

  it('stores a 422 for an invalid body under the key and replays it', async () => {
    const page = await insertTestPage(storeId, key.id);
    const k = idem();
    const first = await api.post(publishPath(page.external_id), { status: 'published' }, { 'Idempotency-Key': k });
    expect(first.status).toBe(422);
    expect(first.body).toMatchObject({ code: 'validation_failed', field: 'status' });
    const again = await api.post(publishPath(page.external_id), { status: 'published' }, { 'Idempotency-Key': k });
    expect(again.text).toBe(first.text);
    expect((await storedPage(storeId, page.id)).status).toBe('draft');
  });

  it('racing requests with one key: one publishes, the others replay it or are told it is in progress', async () => {
    const page = await insertTestPage(storeId, key.id);
    const k = idem();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => api.post(publishPath(page.external_id), undefined, { 'Idempotency-Key': k })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(new Set(ok.map((r) => r.text)).size).toBe(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status).toBe(409);
      expect(r.body.code).toBe('idempotency_in_progress');
    }
  });
});

describe('content endpoints: refusals', () => {
  let storeId: string;
  let key: TestKey;
  let api: Api;
  beforeAll(async () => {
    storeId = await createStore();
    key = await createKey(storeId, ['content:read', 'content:write']);
    api = client(key.token);
  });

  const cases: [string, (x: string) => string, () => Record<string, string>][] = [
    ['publish', publishPath, () => ({ 'Idempotency-Key': idem() })],
    ['unpublish', unpublishPath, () => ({})],
  ];
  for (const [name, path, headers] of cases) {
    describe(name, () => {
      it('answers 401 without a valid key', async () => {
        for (const token of [null, 'not-a-key']) {
          const res = await client(token).post(path(xid()), undefined, headers());
          expect(res.status).toBe(401);
          expectErrorShape(res.body);
        }
      });

      it('answers 403 naming content:write to a key without it', async () => {
        const page = await insertTestPage(storeId, key.id, { status: 'published' });
        const reader = client((await createKey(storeId, ['content:read'])).token);
        const res = await reader.post(path(page.external_id), undefined, headers());
        expect(res.status).toBe(403);
        expectErrorShape(res.body);
        expect(res.body.code).toBe('forbidden');
        expect(res.body.message).toContain('content:write');
        expect((await storedPage(storeId, page.id)).status).toBe('published');
      });

      it("answers 404 for an unknown external id and for another key's page", async () => {
        const unknown = await api.post(path(xid()), undefined, headers());
        expect(unknown.status).toBe(404);
        expectErrorShape(unknown.body);
        expect(unknown.body.code).toBe('not_found');
        const other = await createKey(storeId, ['content:write']);
        const theirs = await insertTestPage(storeId, other.id, { status: 'published' });
        expect((await api.post(path(theirs.external_id), undefined, headers())).status).toBe(404);
        expect((await storedPage(storeId, theirs.id)).status).toBe('published');
      });

      it('answers 422 naming external_id for a malformed one, and naming an unknown body field', async () => {
        const bad = await api.post(path('bad%20id'), undefined, headers());
        expect(bad.status).toBe(422);
        expect(bad.body).toMatchObject({ code: 'validation_failed', field: 'external_id' });
        const page = await insertTestPage(storeId, key.id, { status: 'published' });
        const extra = await api.post(path(page.external_id), { force: true }, headers());
        expect(extra.status).toBe(422);
        expect(extra.body).toMatchObject({ code: 'validation_failed', field: 'force' });
        expect((await storedPage(storeId, page.id)).updated_at).toBe(page.updated_at);
      });
    });
  }
});
