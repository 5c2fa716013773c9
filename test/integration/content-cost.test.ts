import { beforeAll, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { createStore } from '#fixtures/api.ts';
import { idem, insertTestPage, pageBody, slug, xid } from '#fixtures/content.ts';
import { handler } from '#functions/content/handler.ts';
import type { DbStats } from '#shared/context.ts';
import { costRow, lambdaEvent, measureLambda, type EventInit } from '#fixtures/lambda-cost.ts';
import type { Page } from '#domain/page/page.ts';

/**
 * Round trips and capacity units of the content Lambda itself (the authorizer's one UpdateItem
 * comes on top of every request). Invokes the handler in-process with the event API Gateway
 * would send, counted in its request context, against a store of 200 pages (one in ten a blog post).
 */
const STORE_SIZE = 200;
const KEY_ID = 999_998;
/** A realistic article: ~2 KB of markup. */
const ARTICLE =
  '<h2>Caring for oak</h2>' +
  '<p>Oak furniture lasts for generations when it is oiled twice a year and kept out of direct sun.</p>'.repeat(20);

const eventFor = (storeId: string, operation: string, init: EventInit) => lambdaEvent(storeId, KEY_ID, operation, init);
const measure = (event: APIGatewayProxyEvent) => measureLambda(handler, event);

const rows: Record<string, string> = {};
const record = (name: string, stats: DbStats) => {
  rows[name] = costRow(stats);
};

describe('content: round trips and capacity per request', () => {
  let storeId: string;
  let pages: Page[] = [];
  beforeAll(async () => {
    storeId = await createStore();
    for (let i = 0; i < STORE_SIZE; i += 50) {
      pages.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, j) =>
            insertTestPage(storeId, KEY_ID, { type: (i + j) % 10 === 0 ? 'blog' : 'page' }),
          ),
        )),
      );
    }
    pages = pages.sort((a, b) => a.id - b.id);
  }, 300_000);

  const put = (externalId: string, body: unknown) =>
    measure(
      eventFor(storeId, 'savePage', {
        path: `/content/pages/${externalId}`,
        params: { external_id: externalId },
        body,
      }),
    );
  const action = (op: 'publishPage' | 'unpublishPage', externalId: string, key: string | null = idem()) =>
    measure(
      eventFor(storeId, op, {
        path: `/content/pages/${externalId}/${op === 'publishPage' ? 'publish' : 'unpublish'}`,
        params: { external_id: externalId },
        headers: key ? { 'idempotency-key': key } : {},
      }),
    );

  it('GET /content/pages: one Query of limit + 1 pages, with or without a type', async () => {
    const plain = await measure(eventFor(storeId, 'listPages', { path: '/content/pages', query: { cursor: '100' } }));
    expect(plain.body.data).toHaveLength(15);
    expect(plain.stats.calls).toBe(1);
    record('GET /content/pages?cursor=100 (15 of 200)', plain.stats);
    const max = await measure(eventFor(storeId, 'listPages', { path: '/content/pages', query: { limit: '50' } }));
    record('GET /content/pages?limit=50', max.stats);
    const typed = await measure(eventFor(storeId, 'listPages', { path: '/content/pages', query: { type: 'blog' } }));
    expect(typed.body.data).toHaveLength(15);
    expect(typed.body.data.every((p: any) => p.type === 'blog')).toBe(true);
    expect(typed.stats.calls).toBe(1);
    record('GET /content/pages?type=blog (15; 1 in 10 pages is a blog post)', typed.stats);
  });

  it('PUT /content/pages/{external_id}: create, update, slug change, no-op, conflicts, validation', async () => {
    const id = xid();
    const body = pageBody({ body: ARTICLE });
    const created = await put(id, body);
    expect(created.status).toBe(200);
    expect(created.stats.ops).toEqual(['BatchGetItem', 'TransactWriteItems']);
    record('PUT page, create (~2 KB body)', created.stats);
    const updated = await put(id, { ...body, title: 'Retitled' });
    expect(updated.stats.ops).toEqual(['BatchGetItem', 'TransactWriteItems']);
    record('PUT page, update (same slug)', updated.stats);
    const moved = await put(id, { ...body, title: 'Retitled', slug: slug() });
    expect(moved.stats.ops).toEqual(['BatchGetItem', 'TransactWriteItems']);
    record('PUT page, update with a new slug', moved.stats);
    const same = await put(id, { ...body, title: 'Retitled', slug: moved.body.data.slug });
    expect(same.stats.ops).toEqual(['BatchGetItem']);
    record('PUT page, no change', same.stats);
    const taken = await put(xid(), { ...body, slug: moved.body.data.slug });
    expect(taken.status).toBe(409);
    record('PUT page, create → 409 slug_taken', taken.stats);
    const invalid = await put(xid(), { ...body, slug: 'Bad Slug' });
    expect(invalid.status).toBe(422);
    expect(invalid.stats.calls).toBe(0);
    record('PUT page, 422', invalid.stats);
  });

  it('POST publish / unpublish: change, replay, no-op, refusals', async () => {
    const page = pages[150]!;
    const k = idem();
    const first = await action('publishPage', page.external_id, k);
    expect(first.status).toBe(200);
    expect(first.stats.ops).toEqual(['BatchGetItem', 'TransactWriteItems']);
    record('POST publish, first call (change)', first.stats);
    const replay = await action('publishPage', page.external_id, k);
    expect(replay.stats.calls).toBe(1);
    record('POST publish, replay', replay.stats);
    const noop = await action('publishPage', page.external_id);
    expect(noop.stats.ops).toEqual(['BatchGetItem', 'PutItem']);
    record('POST publish, no-op (already published)', noop.stats);
    const unknown = await action('publishPage', xid());
    expect(unknown.status).toBe(404);
    record('POST publish, 404', unknown.stats);
    const bad = await action('publishPage', 'bad id');
    expect(bad.status).toBe(422);
    expect(bad.stats.calls).toBe(1);
    record('POST publish, 422 (stored at once)', bad.stats);

    const un = await action('unpublishPage', page.external_id, null);
    expect(un.stats.ops).toEqual(['GetItem', 'TransactWriteItems']);
    record('POST unpublish, change', un.stats);
    const unNoop = await action('unpublishPage', page.external_id, null);
    expect(unNoop.stats.ops).toEqual(['GetItem']);
    record('POST unpublish, no-op', unNoop.stats);
    const draft = await action('unpublishPage', pages[151]!.external_id, null);
    expect(draft.status).toBe(409);
    record('POST unpublish, 409 (draft)', draft.stats);
  });

  it('prints the table', () => {
    console.log(
      '\n' +
        Object.entries(rows)
          .map(([k, v]) => `${k.padEnd(62)} ${v}`)
          .join('\n'),
    );
  });
});
