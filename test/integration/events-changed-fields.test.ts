import { newContext } from '#shared/context.ts';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, client, createKey, createStore, expectErrorShape } from '#fixtures/api.ts';
import { idemKey, orderFile, statusPath } from '#fixtures/orders.ts';
import { pageBody, pagePath, publishPath, slug, unpublishPath, xid } from '#fixtures/content.ts';
import { startReceiver, verify, waitFor } from '#fixtures/webhooks.ts';
import { useMcpClients } from '#fixtures/mcp-client.ts';
import { lastSequence } from '#db/event/log.repo.ts';

/**
 * What changed (docs/webhooks.md, "What changed"): `changed_fields` on the events of a change, in
 * GET /events, in list_events and in webhook bodies, and `types` filters that name fields.
 */
interface Event {
  id: string;
  sequence: number;
  type: string;
  changed_fields?: string[] | null;
  data: Record<string, any>;
}

const connect = useMcpClients('events-changed-fields-test');

describe('changed_fields on every event that carries it', () => {
  let storeId: string;
  let api: ReturnType<typeof client>;
  let events: Event[];
  const reference = `CF-${randomUUID().slice(0, 8)}`;
  const page = xid();

  beforeAll(async () => {
    storeId = await createStore();
    api = client((await createKey(storeId)).token);
    const ok = async (res: Promise<{ status: number }>) => expect((await res).status).toBe(200);
    // 1 created, 2 price+quantity, 3 name
    await ok(api.put('/catalog/products/cf-1', { name: 'Oak chair', price: 100, quantity: 5 }));
    await ok(api.put('/catalog/products/cf-1', { name: 'Oak chair', price: 120, quantity: 4 }));
    await ok(api.patch('/catalog/products/cf-1', { name: 'Oak dining chair' }));
    // 4, 5 created and renamed; 6, 7 the same for a tag
    await ok(api.put('/catalog/categories/chairs', { name: 'Chairs' }));
    await ok(api.put('/catalog/categories/chairs', { name: 'Dining chairs' }));
    await ok(api.put('/catalog/tags/oak', { value: 'oak' }));
    await ok(api.put('/catalog/tags/oak', { value: 'solid oak' }));
    // 8 first publish, 9 a revision with a new title goes live, 10 unpublish
    const pageSlug = slug();
    await ok(api.put(pagePath(page), pageBody({ title: 'About', slug: pageSlug })));
    await ok(api.post(publishPath(page), undefined, { 'Idempotency-Key': idemKey() }));
    await ok(api.put(pagePath(page), pageBody({ title: 'About us', slug: pageSlug })));
    await ok(api.post(publishPath(page), undefined, { 'Idempotency-Key': idemKey() }));
    await ok(api.post(unpublishPath(page)));
    // 11 created, 12 paid, 13 status_changed
    await adminCommand('orders place', { store: storeId, file: orderFile({ reference }) });
    await adminCommand('orders mark-paid', { store: storeId, reference });
    await ok(api.post(statusPath(reference), { status: 'processing' }, { 'Idempotency-Key': idemKey() }));
    // A write that changes nothing raises nothing (14 would be a second event here).
    await ok(api.put('/catalog/products/cf-1', { name: 'Oak dining chair', price: 120, quantity: 4 }));
    await waitFor('13 numbered events', async () => (await lastSequence(newContext(), storeId)) >= 13);
    const res = await api.get<{ data: Event[] }>('/events?limit=100');
    expect(res.status).toBe(200);
    events = res.body.data;
  }, 600_000);

  const of = (type: string) => events.filter((e) => e.type === type).map((e) => e.changed_fields);

  it('names the write-shape fields each change moved, beside type and data', () => {
    expect(events).toHaveLength(13);
    expect(of('product.updated')).toEqual([['price', 'quantity'], ['name']]);
    expect(of('category.upserted')).toEqual([['name'], ['name']]);
    expect(of('tag.upserted')).toEqual([['value'], ['value']]);
    expect(of('page.published')).toEqual([['status'], ['title']]);
    expect(of('page.unpublished')).toEqual([['status']]);
    expect(of('order.status_changed')).toEqual([['status']]);
    for (const e of events) expect(Object.keys(e)).toEqual(expect.arrayContaining(['type', 'data']));
  });

  it('gives the other event types no changed_fields', () => {
    for (const type of ['product.created', 'order.created', 'order.paid'])
      for (const e of events.filter((x) => x.type === type)) expect(e).not.toHaveProperty('changed_fields');
  });

  it('filters by field: an entry with fields passes the events that changed any of them', async () => {
    const listed = async (types: string) => {
      const res = await api.get<{ data: Event[] }>(`/events?limit=100&types=${encodeURIComponent(types)}`);
      expect(res.status, types).toBe(200);
      return res.body.data.map((e) => `${e.type}:${(e.changed_fields ?? []).join('+')}`);
    };
    expect(await listed('product.updated:price')).toEqual(['product.updated:price+quantity']);
    expect(await listed('product.updated:name,price')).toEqual([
      'product.updated:price+quantity',
      'product.updated:name',
    ]);
    expect(await listed('product.updated:sku')).toEqual([]);
    // Order events take the express lane, so across families the log need not follow commit order.
    expect((await listed('page.published:title,order.paid')).sort()).toEqual(['order.paid:', 'page.published:title']);
    // The old form is unchanged: a type alone takes every event of it.
    expect(await listed('product.updated,tag.upserted')).toEqual([
      'product.updated:price+quantity',
      'product.updated:name',
      'tag.upserted:value',
      'tag.upserted:value',
    ]);
  });

  it('refuses a bad filter with 422 validation_failed on types', async () => {
    for (const types of [
      'product.updated:colour',
      'order.paid:status',
      'price',
      'order.paid,price',
      'product.shipped:price',
      'product.updated:',
    ]) {
      const res = await api.get(`/events?types=${encodeURIComponent(types)}`);
      expect(res.status, types).toBe(422);
      expectErrorShape(res.body);
      expect(res.body, types).toMatchObject({ code: 'validation_failed', field: 'types' });
    }
  });

  it('applies the same filter in the MCP tool list_events', async () => {
    const mcp = await connect((await createKey(storeId, ['catalog:read', 'orders:read'])).token);
    const call = async (types: string[]) =>
      (await mcp.callTool({ name: 'list_events', arguments: { types, limit: 100 } })) as CallToolResult & {
        structuredContent: { data: Event[] };
      };
    const result = await call(['product.updated:price', 'order.status_changed']);
    expect(result.isError).toBeFalsy();
    expect(
      result.structuredContent.data
        .map((e) => [e.type, e.changed_fields])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    ).toEqual([
      ['order.status_changed', ['status']],
      ['product.updated', ['price', 'quantity']],
    ]);
    const refused = await call(['product.updated:colour']);
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('product.updated has no field colour');
  });
});

describe('a subscription that names fields', () => {
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  it('delivers a price change and not a name-only change, with changed_fields in the signed body', async () => {
    const storeId = await createStore();
    const [filtered, witness] = [await startReceiver(), await startReceiver()];
    receivers.push(filtered, witness);
    const key = await createKey(storeId, ['catalog:read'], {
      webhook_url: filtered.url,
      events: 'product.updated:price',
    });
    expect(key).toMatchObject({ events: ['product.updated:price'] });
    await createKey(storeId, ['catalog:read'], { webhook_url: witness.url, events: 'product.updated' });
    const api = client((await createKey(storeId, ['catalog:write'])).token);
    expect((await api.put('/catalog/products/w-1', { name: 'Oak chair', price: 100 })).status).toBe(200);
    // The change that does not match first, then the one that does.
    expect((await api.patch('/catalog/products/w-1', { name: 'Oak dining chair' })).status).toBe(200);
    expect((await api.patch('/catalog/products/w-1', { price: 110 })).status).toBe(200);

    const bodies = (r: typeof filtered) => r.received.map((q) => JSON.parse(q.body) as Event);
    await waitFor('the price change at the filtered key', () => filtered.received.length >= 1);
    // The witness got the name-only change too, so its fan-out (which picks every receiving key
    // of an event at once) is done: had it matched, the filtered key would have had it queued.
    await waitFor('both changes at the witness', () => witness.received.length >= 2);
    expect(bodies(witness).map((e) => e.changed_fields)).toEqual(expect.arrayContaining([['name'], ['price']]));
    expect(filtered.received).toHaveLength(1);
    const [body] = bodies(filtered);
    expect(body).toMatchObject({ type: 'product.updated', changed_fields: ['price'] });
    expect(Object.keys(body!)).toEqual(['id', 'sequence', 'type', 'timestamp', 'origin', 'changed_fields', 'data']);
    verify(key.webhook_secret, filtered.received[0]!);
  });

  it('sets, shows and refuses field lists in keys set-webhook, changing nothing on a refusal', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['catalog:read', 'content:read']);
    const set = await adminCommand<{ events: string[] }>('keys set-webhook', {
      id: key.id,
      events: 'page.published:body,title,product.updated, product.updated:sku',
    });
    expect(set.events).toEqual(['product.updated', 'page.published:title,body']);
    for (const events of ['product.updated:colour', 'order.created:status', 'price']) {
      expect(await admin({ command: 'keys set-webhook', args: { id: key.id, events } }), events).toMatchObject({
        ok: false,
        error: { code: 'validation_failed', field: 'events' },
      });
    }
    const listed = await adminCommand<{ data: { id: number; events: string[] }[] }>('keys list', { store: storeId });
    expect(listed.data.find((k) => k.id === key.id)?.events).toEqual(['product.updated', 'page.published:title,body']);
  });
});
