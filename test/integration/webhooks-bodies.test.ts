import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { adminCommand, client, createKey, createStore } from '#fixtures/api.ts';
import { startReceiver, waitFor } from '#fixtures/webhooks.ts';
import { idem } from '#fixtures/content.ts';
import { placeOrder, statusPath } from '#fixtures/orders.ts';
import { buildOpenApiDocument } from '#http/openapi/document.ts';
import { EVENT_TYPES } from '#domain/event/event.ts';

/**
 * The `webhooks` section of the OpenAPI document says what a receiver gets: a real delivery of
 * every event type (and a ping), sent by the local stack to a real receiver, validates against
 * the body schema of its type, and its `webhook-sequence` header is the body's sequence.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(buildOpenApiDocument() as object, 'openapi');
const bodySchema = (type: string) =>
  ajv.getSchema(`openapi#/webhooks/${type}/post/requestBody/content/application~1json/schema`);

describe('webhook bodies against the OpenAPI webhooks section', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('a delivery of each of the ten event types, and a ping, is a valid body of its type', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, undefined, { webhook_url: receiver.url, events: EVENT_TYPES.join(',') });
    const api = client(key.token);
    const ok = (res: { status: number; text: string }) => expect(res.status, res.text).toBe(200);
    ok(await api.put('/catalog/categories/c1', { name: 'Chairs' }));
    ok(await api.put('/catalog/tags/t1', { value: 'Summer' }));
    ok(await api.put('/catalog/products/p1', { name: 'Oak chair', price: 100, category_external_ids: ['c1'] }));
    ok(await api.put('/catalog/products/p1', { name: 'Oak chair', price: 120, category_external_ids: ['c1'] }));
    ok(await api.post('/catalog/products/p1/stock', { delta: 3 }, { 'Idempotency-Key': idem() }));
    ok(await api.put('/content/pages/pg1', { type: 'page', title: 'About', slug: 'about', body: '<p>Hi</p>' }));
    ok(await api.post('/content/pages/pg1/publish', undefined, { 'Idempotency-Key': idem() }));
    ok(await api.post('/content/pages/pg1/unpublish'));
    const order = await placeOrder(storeId);
    await adminCommand('orders mark-paid', { store: storeId, reference: order.reference });
    ok(await api.post(statusPath(order.reference), { status: 'processing' }, { 'Idempotency-Key': idem() }));
    await adminCommand('webhooks ping', { id: key.id });

    // The receiver is this test's and the key the store's only one: every request is one of these
    // eleven (a delivery may come twice, at least once being the promise).
    const types = () => new Set(receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type));
    await waitFor('ten events and a ping', () => types().size === EVENT_TYPES.length + 1, 300_000, 250);
    expect([...types()].sort()).toEqual([...EVENT_TYPES, 'webhook.ping'].sort());
    const bodies = receiver.received.map((r) => ({ headers: r.headers, body: JSON.parse(r.body) }));
    for (const { headers, body } of bodies) {
      const validate = bodySchema(body.type)!;
      expect(validate, body.type).toBeDefined();
      expect(validate(body), `${body.type}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      if (body.type !== 'webhook.ping') expect(headers['webhook-sequence']).toBe(String(body.sequence));
    }
    // A body that breaks the schema is refused by it (the check can fail).
    const product = bodies.find(({ body }) => body.type === 'product.updated')!.body;
    expect(product.data.product).toMatchObject({ external_id: 'p1', min_price: 120 });
    expect(bodySchema('product.updated')!({ ...product, sequence: 0 })).toBe(false);
    expect(bodySchema('product.updated')!({ ...product, type: 'product.created' })).toBe(false);
  }, 600_000);
});
