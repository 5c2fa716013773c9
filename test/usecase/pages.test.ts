import { beforeAll, describe, expect, it } from 'vitest';
import {
  idempotentRequest,
  listPages,
  newKey,
  outcome,
  pageContent,
  pageIn,
  publishPage,
  raisedEvents,
  savePage,
  storeItems,
  storeWithCaller,
  unique,
  unpublishPage,
  type TestCaller,
} from '#fixtures/usecase.ts';
import { contentChecksum } from '#domain/page/checksum.ts';
import type { PageResource, PageType } from '#domain/page/page.ts';

/**
 * The page use cases (shared/app/pages.ts) called in-process: saves (create, replace, no-op, slug
 * claims, If-Match), publish and unpublish with their state machine and Idempotency-Key, racing
 * writers, and the list. What the routes answer (status, ETag, bodies) is
 * test/integration/content-*.test.ts's.
 */
const editor = () => storeWithCaller(['content:read', 'content:write']);

/** A save that must have gone through: its page document. */
async function saved(caller: TestCaller, xid: string, body: Record<string, unknown> = {}) {
  const answer = await savePage(caller, xid, await pageContent(body));
  if ('result' in answer) throw new Error(`save of ${xid} refused on ${answer.header}`);
  return answer.data;
}

function publish(caller: TestCaller, xid: string, key?: string) {
  return outcome(
    publishPage(caller, xid, idempotentRequest(caller, `/content/pages/${xid}/publish`, undefined, { key })),
  );
}

describe('savePage', () => {
  it('creates a draft, replaces it on the next save, and writes nothing for the same content', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    const content = { title: 'About', slug: unique('about') };
    const first = await saved(caller, xid, content);
    expect(first).toMatchObject({ external_id: xid, status: 'draft', published_at: null, ...content });
    const same = await saved(caller, xid, content);
    expect(same).toEqual(first);
    const second = await saved(caller, xid, { ...content, title: 'About us' });
    expect(second).toMatchObject({ id: first.id, title: 'About us', created_at: first.created_at });
    expect(second.updated_at > first.updated_at).toBe(true);
    // A draft's saves raise no event: only publishing makes a page public.
    expect(await raisedEvents(caller.storeId)).toEqual([]);
  });

  it('keeps a published page live while it is edited: the save is its pending revision until the next publish', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    const live = await saved(caller, xid, { title: 'Live' });
    expect(await publish(caller, xid)).toMatchObject({ kind: 'answered', answer: { data: { status: 'published' } } });
    const edited = await saved(caller, xid, { title: 'Edited', slug: live.slug });
    expect(edited).toMatchObject({ title: 'Edited', status: 'published', has_unpublished_changes: true });
    const listed = await listPages(caller, { cursor: 0, limit: 10 });
    expect(listed.data).toEqual([expect.objectContaining({ title: 'Live', has_unpublished_changes: true })]);
    const drafts = await listPages(caller, { cursor: 0, limit: 10, version: 'draft' });
    expect(drafts.data).toEqual([expect.objectContaining({ title: 'Edited' })]);
    expect(await publish(caller, xid)).toMatchObject({
      kind: 'answered',
      answer: { data: { title: 'Edited', has_unpublished_changes: false } },
    });
  });

  it("refuses a slug another page of the store has, also another key's, and leaves the page as it was", async () => {
    const { caller } = await editor();
    const { caller: other } = await newKey(caller.storeId, ['content:write']);
    const taken = await saved(other, unique('cms'));
    expect(await outcome(savePage(caller, unique('cms'), await pageContent({ slug: taken.slug })))).toMatchObject({
      kind: 'refused',
      code: 'slug_taken',
      field: 'slug',
    });
    const mine = await saved(caller, unique('cms'));
    const xid = mine.external_id as string;
    expect(await outcome(savePage(caller, xid, await pageContent({ slug: taken.slug })))).toMatchObject({
      code: 'slug_taken',
    });
    expect((await storeItems(caller.storeId, 'PAGE#')).find((p) => p.id === mine.id)).toMatchObject({
      slug: mine.slug,
      title: mine.title,
    });
    // Another store may use the same slug.
    const { caller: elsewhere } = await editor();
    expect(await saved(elsewhere, unique('cms'), { slug: taken.slug })).toMatchObject({ slug: taken.slug });
  });

  it('saves over the draft only while the If-Match checksum is current, and creates only with If-None-Match', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    const first = await pageContent({ title: 'One' });
    expect(await savePage(caller, xid, first, { ifMatch: '*' })).toEqual({
      result: 'precondition_failed',
      header: 'If-Match',
    });
    expect(await savePage(caller, xid, first, { createOnly: true })).toMatchObject({ data: { title: 'One' } });
    expect(await savePage(caller, xid, first, { createOnly: true })).toEqual({
      result: 'precondition_failed',
      header: 'If-None-Match',
    });
    const second = await pageContent({ title: 'Two', slug: first.slug });
    expect(await savePage(caller, xid, second, { ifMatch: [contentChecksum(first)] })).toMatchObject({
      data: { title: 'Two' },
    });
    const third = await pageContent({ title: 'Three', slug: first.slug });
    expect(await savePage(caller, xid, third, { ifMatch: [contentChecksum(first)] })).toEqual({
      result: 'precondition_failed',
      header: 'If-Match',
    });
    expect((await storeItems(caller.storeId, 'PAGE#'))[0]).toMatchObject({ title: 'Two' });
  });
});

describe('publishPage and unpublishPage', () => {
  it('moves draft → published → unpublished → published, answers repeats as no-ops, and raises one event per move', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    await saved(caller, xid);
    const published = await publish(caller, xid);
    expect(published).toMatchObject({ kind: 'answered', answer: { data: { status: 'published' } } });
    if (published.kind !== 'answered') return;
    const page = published.answer.data;
    expect(page.published_at).toBe(page.updated_at);
    expect(await publish(caller, xid)).toMatchObject({ kind: 'answered', answer: { data: page }, stored: undefined });
    const unpublished = await unpublishPage(caller, xid);
    expect(unpublished.data).toMatchObject({ status: 'unpublished', published_at: page.published_at });
    expect(await unpublishPage(caller, xid)).toEqual(unpublished);
    const again = await publish(caller, xid);
    expect(again).toMatchObject({ kind: 'answered', answer: { data: { status: 'published' } } });
    if (again.kind === 'answered') expect(again.answer.data.published_at! > page.published_at!).toBe(true);
    expect((await raisedEvents(caller.storeId)).map((e) => e.event_type)).toEqual([
      'page.published',
      'page.unpublished',
      'page.published',
    ]);
  });

  it('refuses to unpublish a draft and finds no unknown page, writing nothing', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    await saved(caller, xid);
    expect(await outcome(unpublishPage(caller, xid))).toMatchObject({ kind: 'refused', code: 'invalid_transition' });
    expect(await publish(caller, unique('none'))).toMatchObject({ kind: 'refused', code: 'not_found' });
    const { caller: other } = await newKey(caller.storeId, ['content:write']);
    expect(await publish(other, xid)).toMatchObject({ kind: 'refused', code: 'not_found' });
    expect((await storeItems(caller.storeId, 'PAGE#'))[0]).toMatchObject({ status: 'draft' });
    expect(await raisedEvents(caller.storeId)).toEqual([]);
  });

  it('replays a publish under its Idempotency-Key even after the page moved on', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    await saved(caller, xid);
    const key = unique('k');
    const first = await publish(caller, xid, key);
    expect(first).toMatchObject({ kind: 'answered', stored: { status: 200 } });
    await unpublishPage(caller, xid);
    expect(await publish(caller, xid, key)).toEqual({
      kind: 'replay',
      response: first.kind === 'answered' ? first.stored : undefined,
    });
    expect((await storeItems(caller.storeId, 'PAGE#'))[0]).toMatchObject({ status: 'unpublished' });
  });
});

describe('racing page writers', () => {
  it('racing first saves of one external id create exactly one page and one slug claim', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    const contents = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        pageContent({ title: `Racer ${i}`, slug: i % 2 ? unique('page') : `shared-${caller.keyId}` }),
      ),
    );
    const results = await Promise.all(contents.map((c) => savePage(caller, xid, c)));
    expect(new Set(results.map((r) => ('data' in r ? r.data.id : undefined))).size).toBe(1);
    const pages = await storeItems(caller.storeId, 'PAGE#');
    const claims = await storeItems(caller.storeId, 'SLUG#');
    expect(pages).toHaveLength(1);
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ sk: `SLUG#${pages[0]?.slug}`, page_id: pages[0]?.id });
  });

  it('racing first saves of different external ids each create their page, with the next ids and no gap', async () => {
    const { caller } = await editor();
    const contents = await Promise.all(Array.from({ length: 12 }, () => pageContent()));
    const results = await Promise.all(contents.map((c) => savePage(caller, unique('cms'), c)));
    const ids = results.map((r) => ('data' in r ? r.data.id : 0)).sort((a, b) => a - b);
    expect(ids).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect((await storeItems(caller.storeId, 'PAGE#')).map((p) => p.id).sort((a, b) => a - b)).toEqual(ids);
  });

  it('racing saves of different external ids with one slug: exactly one wins, the others are refused slug_taken', async () => {
    const { caller } = await editor();
    const { caller: second } = await newKey(caller.storeId, ['content:write']);
    for (let round = 0; round < 3; round++) {
      const slug = unique('race');
      const contents = await Promise.all(Array.from({ length: 8 }, () => pageContent({ slug })));
      const results = await Promise.all(
        contents.map((c, i) => outcome(savePage(i % 2 ? second : caller, unique('cms'), c))),
      );
      expect(results.filter((r) => 'data' in r)).toHaveLength(1);
      const refusals = results.filter((r) => !('data' in r));
      expect(refusals).toHaveLength(7);
      for (const r of refusals) expect(r).toMatchObject({ kind: 'refused', code: 'slug_taken', field: 'slug' });
      expect((await storeItems(caller.storeId, 'PAGE#')).filter((p) => p.slug === slug)).toHaveLength(1);
    }
  });

  it('racing slug moves of two existing pages onto one slug: one moves, the other stays as it was', async () => {
    const { caller } = await editor();
    const [a, b] = [unique('cms'), unique('cms')];
    const pa = await saved(caller, a);
    const pb = await saved(caller, b);
    const slug = unique('target');
    const [ra, rb] = await Promise.all([
      outcome(savePage(caller, a, await pageContent({ slug }))),
      outcome(savePage(caller, b, await pageContent({ slug }))),
    ]);
    const refused = [ra, rb].filter((r) => !('data' in r));
    expect(refused).toEqual([expect.objectContaining({ kind: 'refused', code: 'slug_taken' })]);
    const pages = await storeItems(caller.storeId, 'PAGE#');
    const claims = await storeItems(caller.storeId, 'SLUG#');
    expect(pages.filter((p) => p.slug === slug)).toHaveLength(1);
    const loser = 'data' in ra ? pb : pa;
    expect(pages.find((p) => p.id === loser.id)?.slug).toBe(loser.slug);
    expect(claims.map((c) => c.sk).sort()).toEqual([`SLUG#${slug}`, `SLUG#${loser.slug}`].sort());
  });

  it('racing publishes with different keys make one change; every answer is the same published page', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    await saved(caller, xid);
    const results = await Promise.all(Array.from({ length: 8 }, () => publish(caller, xid)));
    const pages = results.map((r) => (r.kind === 'answered' ? r.answer.data : undefined));
    expect(pages.every((p) => p?.status === 'published')).toBe(true);
    expect(new Set(pages.map((p) => p?.published_at)).size).toBe(1);
    expect(new Set(pages.map((p) => p?.updated_at)).size).toBe(1);
    expect(await raisedEvents(caller.storeId, 'page.published')).toHaveLength(1);
  });

  it('racing save and publish: both land, in some order, and the answers match what was stored', async () => {
    const { caller } = await editor();
    const xid = unique('cms');
    const page = await saved(caller, xid);
    const content = await pageContent({ slug: page.slug, title: 'Raced' });
    const [save, published] = await Promise.all([savePage(caller, xid, content), publish(caller, xid)]);
    if (!('data' in save) || published.kind !== 'answered') throw new Error('a racer was refused');
    const [stored] = await storeItems(caller.storeId, 'PAGE#');
    const last = save.data.updated_at > published.answer.data.updated_at ? save.data : published.answer.data;
    // Either order ends published with the raced content as its latest revision: live when the
    // publish came second, a pending draft over the published page when the save did.
    expect(stored).toMatchObject({ status: 'published', updated_at: last.updated_at });
    expect((stored?.draft ?? stored)?.title).toBe('Raced');
    expect(last).toMatchObject({ status: 'published', has_unpublished_changes: stored?.draft !== null });
  });
});

describe('listPages: walks', () => {
  // 31 pages: blog posts at every third position and in a sparse tail, so typed pages must skip.
  const layout: PageType[] = Array.from({ length: 31 }, (_, i) => (i % 3 === 0 && i < 24 ? 'blog' : 'page'));
  let caller: TestCaller;
  let ids: { id: number; type: PageType }[] = [];
  beforeAll(async () => {
    ({ caller } = await editor());
    for (const [i, type] of layout.entries()) {
      const page = await pageIn(caller.storeId, caller.keyId, { type, status: i % 2 ? 'published' : 'draft' });
      ids.push({ id: page.id, type });
    }
    ids = ids.sort((a, b) => a.id - b.id);
  });

  /** Follows next_cursor to the end, checking each page as a client relies on it; every page seen. */
  async function walk(limit: number, type?: PageType) {
    const seen: PageResource[] = [];
    let cursor = 0;
    for (let guard = 0; guard < 100; guard++) {
      const page = await listPages(caller, { cursor, limit, type });
      seen.push(...page.data);
      if (page.next_cursor === null) {
        expect(page.data.length).toBeLessThanOrEqual(limit);
        return seen;
      }
      // A page that points further is always full, and its cursor is its last id.
      expect(page.data).toHaveLength(limit);
      expect(page.next_cursor).toBe(page.data.at(-1)?.id);
      cursor = page.next_cursor;
    }
    throw new Error('the walk did not end');
  }

  it.each([4, 7, 31, 50])('walks all pages without skips or repeats (limit %i)', async (limit) => {
    expect((await walk(limit)).map((p) => p.id)).toEqual(ids.map((p) => p.id));
  });

  it.each([
    ['blog', 3],
    ['blog', 8],
    ['page', 5],
    ['page', 50],
  ] as const)('with type %s walks exactly the pages of that type in full pages (limit %i)', async (type, limit) => {
    const seen = await walk(limit, type);
    expect(seen.map((p) => p.id)).toEqual(ids.filter((p) => p.type === type).map((p) => p.id));
    expect(seen.every((p) => p.type === type)).toBe(true);
  });
});
