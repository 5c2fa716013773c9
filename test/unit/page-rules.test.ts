import { nextUpdatedAt } from '#domain/time.ts';
import { describe, expect, it } from 'vitest';
import * as v from 'valibot';
import { PAGE_STATUSES, toPageResource, type Page, type PageStatus } from '#domain/page/page.ts';
import { decide, decidePublish, decideUnpublish, newPage, savedPage, withStatus } from '#domain/page/rules.ts';
import { BODY_MAX_BYTES, PageBody, sanitizedBody, SLUG_MAX, TITLE_MAX } from '#domain/page/page-write.ts';
import { keys } from '#db/keys.ts';
import { isRefused } from '#domain/outcome.ts';

const T0 = '2026-03-01T10:00:00.000Z';

function page(overrides: Partial<Page> = {}): Page {
  return {
    id: 7,
    store_id: 's1',
    external_id: 'cms:7',
    owner_key_id: 3,
    type: 'page',
    title: 'About',
    slug: 'about',
    body: '<p>x</p>',
    status: 'draft',
    published_at: null,
    draft: null,
    created_at: T0,
    updated_at: T0,
    ...overrides,
  };
}

describe('page state machine (docs/contract.md#pages)', () => {
  const expected: Record<'publish' | 'unpublish', Record<PageStatus, string>> = {
    publish: { draft: 'change', unpublished: 'change', published: 'noop' },
    unpublish: { published: 'change', unpublished: 'noop', draft: 'forbidden' },
  };
  for (const action of ['publish', 'unpublish'] as const) {
    for (const from of PAGE_STATUSES) {
      it(`${action} from ${from}: ${expected[action][from]}`, () => {
        expect(decide(action, from).kind).toBe(expected[action][from]);
      });
    }
  }

  it('names both states of a change and of a refusal', () => {
    expect(decidePublish('unpublished')).toEqual({ kind: 'change', from: 'unpublished', to: 'published' });
    expect(decideUnpublish('draft')).toEqual({ kind: 'forbidden', from: 'draft', to: 'unpublished' });
  });

  it('publishing stamps published_at and updated_at with the same instant; unpublishing keeps published_at', () => {
    const now = Date.parse('2026-03-02T00:00:00.000Z');
    const published = withStatus(page(), 'published', now);
    expect(published).toMatchObject({
      status: 'published',
      published_at: '2026-03-02T00:00:00.000Z',
      updated_at: '2026-03-02T00:00:00.000Z',
      created_at: T0,
    });
    const unpublished = withStatus(published, 'unpublished', now + 5);
    expect(unpublished).toMatchObject({
      status: 'unpublished',
      published_at: '2026-03-02T00:00:00.000Z',
      updated_at: '2026-03-02T00:00:00.005Z',
    });
  });
});

describe('saving', () => {
  const content = { type: 'blog' as const, title: 'New', slug: 'new', body: '<p>new</p>' };

  it('a new page is always a draft, never published, created_at = updated_at', () => {
    const draft = newPage(content, { storeId: 's1', keyId: 3, externalId: 'x' }, Date.parse(T0));
    expect(draft).toMatchObject({
      ...content,
      status: 'draft',
      published_at: null,
      created_at: T0,
      updated_at: T0,
      owner_key_id: 3,
      external_id: 'x',
    });
  });

  it.each(['draft', 'unpublished'] as const)(
    'a save of a %s page leaves it a draft, keeps created_at and published_at',
    (status) => {
      const current = page({ status, published_at: status === 'draft' ? null : T0 });
      const next = savedPage(current, content, Date.parse('2026-03-03T00:00:00.000Z'))!;
      expect(next).toMatchObject({
        ...content,
        status: 'draft',
        created_at: T0,
        published_at: current.published_at,
        updated_at: '2026-03-03T00:00:00.000Z',
      });
    },
  );

  it('a save that changes nothing is null, on a draft and on a published page', () => {
    const same = { type: 'page' as const, title: 'About', slug: 'about', body: '<p>x</p>' };
    expect(savedPage(page(), same)).toBeNull();
    expect(savedPage(page({ status: 'published', published_at: T0 }), same)).toBeNull();
  });

  it('a save of a published page keeps the live version and status, and holds the save as its revision', () => {
    const live = page({ status: 'published', published_at: T0 });
    const next = savedPage(live, content, Date.parse('2026-03-03T00:00:00.000Z'))!;
    expect(next).toMatchObject({
      title: 'About',
      slug: 'about',
      body: '<p>x</p>',
      status: 'published',
      published_at: T0,
      draft: content,
      updated_at: '2026-03-03T00:00:00.000Z',
    });
    expect(savedPage(next, content)).toBeNull(); // the same revision again
    // Saving the live content again drops the revision: nothing is left to publish.
    expect(savedPage(next, { type: 'page', title: 'About', slug: 'about', body: '<p>x</p>' })).toMatchObject({
      draft: null,
      status: 'published',
    });
  });

  it('publishing a revision puts it live; unpublishing keeps it as the content; a published page without one is a no-op', () => {
    const edited = page({ status: 'published', published_at: T0, draft: content });
    expect(decide('publish', 'published', true)).toEqual({ kind: 'change', from: 'published', to: 'published' });
    expect(decide('publish', 'published', false)).toEqual({ kind: 'noop' });
    const now = Date.parse('2026-03-04T00:00:00.000Z');
    expect(withStatus(edited, 'published', now)).toMatchObject({
      ...content,
      draft: null,
      status: 'published',
      published_at: '2026-03-04T00:00:00.000Z',
    });
    expect(withStatus(edited, 'unpublished', now)).toMatchObject({
      ...content,
      draft: null,
      status: 'unpublished',
      published_at: T0,
    });
  });

  it('updated_at strictly increases even when the clock is behind', () => {
    expect(nextUpdatedAt(T0, Date.parse(T0) - 60_000)).toBe('2026-03-01T10:00:00.001Z');
    expect(nextUpdatedAt(T0, Date.parse(T0))).toBe('2026-03-01T10:00:00.001Z');
    expect(nextUpdatedAt(T0, Date.parse(T0) + 10)).toBe('2026-03-01T10:00:00.010Z');
  });
});

describe('toPageResource', () => {
  it('is the record of docs/contract.md#pages in its field order', () => {
    expect(Object.keys(toPageResource(page()))).toEqual([
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
  });

  it('shows the live version unless the draft version is asked for', () => {
    const content = { type: 'blog' as const, title: 'New', slug: 'new', body: '<p>new</p>' };
    const edited = page({ status: 'published', published_at: T0, draft: content });
    expect(toPageResource(edited)).toMatchObject({
      title: 'About',
      body: '<p>x</p>',
      status: 'published',
      has_unpublished_changes: true,
      published_at: T0,
    });
    expect(toPageResource(edited, 3, 'draft')).toMatchObject({
      ...content,
      status: 'published',
      has_unpublished_changes: true,
      published_at: T0,
    });
    expect(toPageResource(page(), 3, 'draft')).toEqual(toPageResource(page()));
  });

  it("shows another key's external id as null", () => {
    expect(toPageResource(page(), 3).external_id).toBe('cms:7');
    expect(toPageResource(page(), 4).external_id).toBeNull();
  });
});

describe('PageBody schema', () => {
  const ok = { type: 'page', title: 'About us', slug: 'about-us', body: '<p>Hi</p>' };
  const fieldOf = (input: unknown) => {
    const r = v.safeParse(PageBody, input, { abortEarly: true });
    return r.success ? 'ok' : (r.issues[0].path ?? []).map((p) => (p as { key: string }).key).join('.');
  };

  it('accepts a valid body and gives `body` as sent (the route stores sanitizedBody of it)', () => {
    const sent = { ...ok, body: '<p onclick="x">Hi</p><script>1</script>' };
    expect(v.parse(PageBody, sent)).toEqual(sent);
    expect(fieldOf({ ...ok, body: '' })).toBe('ok');
  });

  it.each([
    ['type', { ...ok, type: 'post' }],
    ['type', { ...ok, type: undefined }],
    ['title', { ...ok, title: '' }],
    ['title', { ...ok, title: '   ' }],
    ['title', { ...ok, title: 'a'.repeat(TITLE_MAX + 1) }],
    ['title', { ...ok, title: 'two\nlines' }],
    ['title', { ...ok, title: 5 }],
    ['slug', { ...ok, slug: '' }],
    ['slug', { ...ok, slug: 'About' }],
    ['slug', { ...ok, slug: '-about' }],
    ['slug', { ...ok, slug: 'about-' }],
    ['slug', { ...ok, slug: 'about--us' }],
    ['slug', { ...ok, slug: 'about_us' }],
    ['slug', { ...ok, slug: 'über' }],
    ['slug', { ...ok, slug: 'a'.repeat(SLUG_MAX + 1) }],
    ['body', { ...ok, body: null }],
    ['body', { ...ok, body: 5 }],
    ['body', { type: 'page', title: 'a', slug: 'a' }],
    ['extra', { ...ok, extra: 1 }],
  ])('refuses %s in %j', (field, input) => {
    expect(fieldOf(input)).toBe(field);
  });

  it('accepts the limits themselves', () => {
    expect(fieldOf({ ...ok, title: '😀'.repeat(TITLE_MAX), slug: 'a'.repeat(SLUG_MAX) })).toBe('ok');
    expect(fieldOf({ ...ok, slug: 'a-1-b2' })).toBe('ok');
  });
});

describe('sanitizedBody', () => {
  const refusal = (html: string) =>
    sanitizedBody(html).then((clean) =>
      isRefused(clean) ? { code: clean.code, field: clean.field, message: clean.message } : undefined,
    );

  it('sanitizes', async () => {
    expect(await sanitizedBody('<p onclick="x">Hi</p><script>1</script>')).toBe('<p>Hi</p>');
    expect(await sanitizedBody('')).toBe('');
  });

  it('bounds what is stored: the limit itself passes, a byte more is 422 on body', async () => {
    expect(await sanitizedBody('x'.repeat(BODY_MAX_BYTES))).toHaveLength(BODY_MAX_BYTES);
    expect(await refusal('x'.repeat(BODY_MAX_BYTES + 1))).toEqual({
      code: 'validation_failed',
      field: 'body',
      message: `body: must be at most ${BODY_MAX_BYTES} bytes after sanitizing (it is ${BODY_MAX_BYTES + 1})`,
    });
    expect(await refusal(`<p>${'x'.repeat(BODY_MAX_BYTES)}</p>`)).toMatchObject({ field: 'body' });
  });

  it('counts the body after sanitizing: removed markup does not count', async () => {
    expect(await sanitizedBody(`<script>${'x'.repeat(BODY_MAX_BYTES * 2)}</script><p>ok</p>`)).toBe('<p>ok</p>');
  });

  it('refuses markup nested too deep as 422 on body', async () => {
    expect(await refusal('<b>'.repeat(1000))).toEqual({
      code: 'validation_failed',
      field: 'body',
      message: expect.stringMatching(/^body: must not nest elements more than \d+ deep$/),
    });
  });
});

describe('page keys', () => {
  it('puts a page in the index partition of its type, in id order', () => {
    expect(keys.pageTypeIndex('s1', 'blog', 42)).toEqual({
      gsi1pk: 'STORE#s1#PAGES#blog',
      gsi1sk: 'PAGE#000000000042',
    });
    expect(keys.pageTypeIndex('s1', 'page', 42).gsi1sk).toBe(keys.page('s1', 42).sk);
  });
});
