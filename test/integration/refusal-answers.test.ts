import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { handler as admin } from '#functions/admin/handler.ts';
import { adminCommand, client, createKey, createStore, storeWithKey } from '#fixtures/api.ts';
import { idem, insertTestPage, pageBody, pagePath, publishPath, unpublishPath, xid } from '#fixtures/content.ts';
import { idemKey, insertTestOrder, orderFile, placeOrder, ref, statusPath } from '#fixtures/orders.ts';
import { deliveryOf, newEventId, putOutboxEvent, startReceiver, waitFor } from '#fixtures/webhooks.ts';
import { BODY_MAX_BYTES } from '#domain/page/page-write.ts';
import { putIdempotencyRecord } from '#fixtures/idempotency.ts';
import { useMcpClients } from '#fixtures/mcp-client.ts';
import { requestFingerprint } from '#domain/idempotency.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import type { ApiResponse } from '#fixtures/api.ts';

/**
 * The exact answers (status, code, message, field) of the refusals a caller can cause in orders,
 * pages, the event log and the admin's order and webhook commands, through each real surface: what
 * their other tests check in part (the code, the field), held here whole, so that moving them from
 * thrown errors to returned outcomes (docs/architecture.md, "The pipeline") changes none of them.
 */

/** An admin command's error, as the CLI prints it. */
async function adminError(command: string, args: Record<string, unknown>) {
  const out = await admin({ command, args });
  if (out.ok) throw new Error(`${command} succeeded unexpectedly`);
  return out.error;
}

describe('orders: the refusals, whole', () => {
  it('answers an unknown order 404 and a forbidden move 409, over HTTP', async () => {
    const { storeId, client: api } = await storeWithKey(['orders:read', 'orders:write-status']);
    const unknown = await api.post(statusPath(ref('NOPE')), { status: 'processing' }, { 'Idempotency-Key': idemKey() });
    expect({ status: unknown.status, body: unknown.body }).toEqual({
      status: 404,
      body: { code: 'not_found', message: 'The order does not exist.', field: null },
    });
    const order = await insertTestOrder(storeId, { status: 'shipped' });
    const moved = await api.post(statusPath(order.reference), { status: 'pending' }, { 'Idempotency-Key': idemKey() });
    expect({ status: moved.status, body: moved.body }).toEqual({
      status: 409,
      body: { code: 'invalid_transition', message: 'An order cannot move from shipped to pending.', field: 'status' },
    });
  });

  it('answers a taken reference, an unknown one and a payment of a cancelled order, through the admin', async () => {
    const storeId = await createStore();
    const reference = ref();
    await placeOrder(storeId, { reference });
    expect(await adminError('orders place', { store: storeId, file: orderFile({ reference }) })).toEqual({
      code: 'conflict',
      message: `an order with reference "${reference}" already exists`,
      field: 'reference',
    });
    const missing = ref('NOPE');
    expect(await adminError('orders mark-paid', { store: storeId, reference: missing })).toEqual({
      code: 'not_found',
      message: `order "${missing}" does not exist in store "${storeId}"`,
      field: 'reference',
    });
    const cancelled = await insertTestOrder(storeId, { status: 'cancelled' });
    expect(await adminError('orders mark-paid', { store: storeId, reference: cancelled.reference })).toEqual({
      code: 'invalid_transition',
      message: `order "${cancelled.reference}" is cancelled; only a pending order can be marked paid`,
      field: 'reference',
    });
  });
});

describe('pages: the refusals, whole', () => {
  it('answers a taken slug 409, a body too long 422, an unknown page 404 and a forbidden move 409', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['content:read', 'content:write']);
    const api = client(key.token);
    const taken = await insertTestPage(storeId, key.id, { status: 'draft' });
    const clash = await api.put(pagePath(xid()), pageBody({ slug: taken.slug }));
    expect({ status: clash.status, body: clash.body }).toEqual({
      status: 409,
      body: {
        code: 'slug_taken',
        message: `Another page of this store already has the slug "${taken.slug}".`,
        field: 'slug',
      },
    });
    const long = await api.put(pagePath(xid()), pageBody({ body: 'x'.repeat(BODY_MAX_BYTES + 1) }));
    expect({ status: long.status, body: long.body }).toEqual({
      status: 422,
      body: {
        code: 'validation_failed',
        message: `body: must be at most ${BODY_MAX_BYTES} bytes after sanitizing (it is ${BODY_MAX_BYTES + 1})`,
        field: 'body',
      },
    });
    const notFound = { code: 'not_found', message: 'The page does not exist.', field: null };
    const publish = await api.post(publishPath(xid()), undefined, { 'Idempotency-Key': idem() });
    expect({ status: publish.status, body: publish.body }).toEqual({ status: 404, body: notFound });
    const unpublish = await api.post(unpublishPath(xid()));
    expect({ status: unpublish.status, body: unpublish.body }).toEqual({ status: 404, body: notFound });
    const draft = await api.post(unpublishPath(taken.external_id));
    expect({ status: draft.status, body: draft.body }).toEqual({
      status: 409,
      body: { code: 'invalid_transition', message: 'A draft page cannot become unpublished.', field: null },
    });
  });
});

describe('catalog: a patch of no product, whole', () => {
  it('answers 404 naming no field, as a read of a product id does', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const res = await api.patch(`/catalog/products/${xid('none')}`, { name: 'Oak' });
    expect(answer(res)).toEqual(refusal(404, 'not_found', 'The product does not exist.', null));
  });
});

describe('the lists: an unknown query parameter, whole', () => {
  it('answers 422 on the parameter, naming the known ones, for orders, events and pages', async () => {
    const { client: api } = await storeWithKey(['orders:read', 'content:read']);
    const cases: [string, string, string][] = [
      ['/orders?updated_after=2026-01-01T00:00:00Z', 'updated_after', 'cursor, limit, updated_since'],
      ['/events?since=1', 'since', 'cursor, limit, types, exclude_own'],
      ['/content/pages?types=blog', 'types', 'type, version, cursor, limit'],
    ];
    for (const [path, name, known] of cases) {
      const res = await api.get(path);
      expect({ status: res.status, body: res.body }, path).toEqual({
        status: 422,
        body: { code: 'validation_failed', message: `${name} is not a known parameter (${known})`, field: name },
      });
    }
  });
});

describe('the event log and the webhook admin: the refusals, whole', () => {
  it('answers a cursor past retention 410 over HTTP and through the admin', async () => {
    const { storeId, client: api } = await storeWithKey(['orders:read']);
    for (let i = 0; i < 3; i++) await placeOrder(storeId);
    await waitFor('three numbered events', async () => (await api.get('/events')).body.data.length === 3 || undefined);
    await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.eventLog(storeId, 2) }));
    const expired = await api.get('/events?cursor=1');
    expect({ status: expired.status, body: expired.body }).toEqual({
      status: 410,
      body: {
        code: 'cursor_expired',
        message: 'Events after 1 are no longer kept (30 days); re-sync and start again without a cursor.',
        field: 'cursor',
      },
    });
    expect(await adminError('webhooks events', { store: storeId, after: 1 })).toEqual({
      code: 'cursor_expired',
      message: 'events after 1 are past the 30-day retention; start from --after 0',
      field: 'after',
    });
  });

  it('answers an unknown delivery and an unknown event through the admin', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read']);
    const eventId = newEventId();
    expect(await adminError('webhooks redeliver', { id: key.id, event: eventId })).toEqual({
      code: 'not_found',
      message: `key ${key.id} has no delivery of event ${eventId}`,
      field: 'event',
    });
    expect(await adminError('webhooks replay', { store: storeId, event: eventId })).toEqual({
      code: 'not_found',
      message: `store ${storeId} has no event ${eventId} (events are kept 30 days)`,
      field: 'event',
    });
    // The event exists once written: the replay of it is answered.
    await putOutboxEvent(storeId, { eventId });
    expect(await adminCommand('webhooks replay', { store: storeId, event: eventId })).toMatchObject({
      event_id: eventId,
    });
  });

  it('answers a redelivery another one overtook 409 conflict, starting no round of its own', async () => {
    const receiver = await startReceiver();
    try {
      const storeId = await createStore();
      const key = await createKey(storeId, ['orders:read'], { webhook_url: receiver.url });
      const { eventId } = await putOutboxEvent(storeId);
      await waitFor('the delivery', async () => (await deliveryOf(key.id, eventId))?.state === 'delivered');
      // Another redelivery starts a round between this one's read of the delivery and its write.
      const name = `overtake-${eventId}`;
      db().middlewareStack.add(
        (next, context) => async (args) => {
          const out = await next(args);
          // The key as sent, marshalled or not by then.
          const read = JSON.stringify((args.input as { Key?: unknown }).Key ?? null);
          if (
            /^Get(Item)?Command$/.test(context.commandName ?? '') &&
            read.includes(keys.delivery(key.id, eventId).sk)
          ) {
            db().middlewareStack.remove(name);
            await db().send(
              new UpdateCommand({
                TableName: tableName(),
                Key: keys.delivery(key.id, eventId),
                UpdateExpression: 'SET #round = #round + :one',
                ExpressionAttributeNames: { '#round': 'round' },
                ExpressionAttributeValues: { ':one': 1 },
              }),
            );
          }
          return out;
        },
        { step: 'initialize', name },
      );
      expect(await adminError('webhooks redeliver', { id: key.id, event: eventId })).toEqual({
        code: 'conflict',
        message: `delivery of event ${eventId} was redelivered concurrently; try again`,
        field: 'event',
      });
      expect(await deliveryOf(key.id, eventId)).toMatchObject({ state: 'delivered', redeliveries: 1 });
    } finally {
      await receiver.close();
    }
  });
});

/**
 * An HTTP refusal whole: status, body, and the headers a refusal carries or must not (Retry-After,
 * Idempotent-Replayed), with the RateLimit-* and X-Request-Id every answer to a key has.
 */
const answer = (res: ApiResponse) => ({
  status: res.status,
  body: res.body,
  retryAfter: res.headers.get('retry-after'),
  replayed: res.headers.get('idempotent-replayed'),
  rateLimited: res.headers.has('ratelimit-limit') && res.headers.has('ratelimit-remaining'),
  requestId: res.headers.has('x-request-id'),
});
const refusal = (status: number, code: string, message: string, field: string | null, more = {}) => ({
  status,
  body: { code, message, field },
  retryAfter: null,
  replayed: null,
  rateLimited: true,
  requestId: true,
  ...more,
});

describe('the edge: query, header and idempotency refusals, whole', () => {
  it('answers a list query the route cannot read 422 on the parameter', async () => {
    const { client: api } = await storeWithKey(['orders:read']);
    expect(answer(await api.get('/events?types=bogus'))).toEqual(
      refusal(
        422,
        'validation_failed',
        'bogus is no event type (a field name follows a type and a colon: product.updated:price); known types: order.created, order.paid, order.status_changed, product.created, product.updated, product.stock_changed, category.upserted, tag.upserted, page.published, page.unpublished',
        'types',
      ),
    );
    expect(answer(await api.get('/orders?updated_since=yesterday'))).toEqual(
      refusal(
        422,
        'validation_failed',
        'updated_since must be an ISO 8601 date-time with an offset, like 2026-11-22T01:24:20Z or 2026-11-22T03:24:20+02:00',
        'updated_since',
      ),
    );
    expect(answer(await api.get('/orders?limit=1&limit=2'))).toEqual(
      refusal(422, 'validation_failed', 'limit is given more than once; send it once.', 'limit'),
    );
  });

  it('answers a reference no order can have 404 and stores it under the Idempotency-Key', async () => {
    const { client: api } = await storeWithKey(['orders:read', 'orders:write-status']);
    const k = idemKey();
    const path = statusPath('no such ref');
    const first = await api.post(path, { status: 'processing' }, { 'Idempotency-Key': k });
    expect(answer(first)).toEqual(refusal(404, 'not_found', 'The order does not exist.', null));
    const again = await api.post(path, { status: 'processing' }, { 'Idempotency-Key': k });
    expect(answer(again)).toEqual(refusal(404, 'not_found', 'The order does not exist.', null, { replayed: 'true' }));
    expect(again.text).toBe(first.text);
    expect(answer(await api.post(path, { status: 'cancelled' }, { 'Idempotency-Key': k }))).toEqual(
      refusal(
        422,
        'idempotency_key_reused',
        'This Idempotency-Key was already used for a different request.',
        'Idempotency-Key',
      ),
    );
  });

  it('answers a missing, malformed and still-running Idempotency-Key', async () => {
    const { storeId, key, client: api } = await storeWithKey(['orders:read', 'orders:write-status']);
    const order = await insertTestOrder(storeId, { status: 'pending' });
    const path = statusPath(order.reference);
    const body = { status: 'processing' };
    expect(answer(await api.post(path, body))).toEqual(
      refusal(400, 'idempotency_key_required', 'The Idempotency-Key header is required.', 'Idempotency-Key'),
    );
    expect(answer(await api.post(path, body, { 'Idempotency-Key': '"open' }))).toEqual(
      refusal(422, 'validation_failed', 'Idempotency-Key is not a valid quoted string (RFC 8941).', 'Idempotency-Key'),
    );
    const k = idemKey();
    await putIdempotencyRecord(
      { keyId: key.id, method: 'POST', path: `${API_BASE_PATH}${path}`, key: k },
      requestFingerprint(body),
    );
    expect(answer(await api.post(path, body, { 'Idempotency-Key': k }))).toEqual(
      refusal(
        409,
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still being processed; retry shortly.',
        'Idempotency-Key',
        { retryAfter: '1' },
      ),
    );
    // A dry run of it is answered the same: its refusal, with its Retry-After.
    expect(answer(await api.post(`${path}?dry_run=true`, body, { 'Idempotency-Key': k }))).toEqual(
      refusal(
        409,
        'idempotency_in_progress',
        'A request with this Idempotency-Key is still being processed; retry shortly.',
        'Idempotency-Key',
        { retryAfter: '1' },
      ),
    );
  });

  it('answers a condition header it cannot read 422 naming it, stored under the key where there is one', async () => {
    const { client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const product = { name: 'Oak', price: 100 };
    const put = `/catalog/products/${xid('edge')}`;
    const tags = 'If-Match must be * or a list of quoted entity tags, e.g. "…checksum…"';
    expect(answer(await api.put(put, product, { 'If-Match': 'abc' }))).toEqual(
      refusal(422, 'validation_failed', tags, 'If-Match'),
    );
    expect(answer(await api.put(put, product, { 'If-None-Match': '"abc"' }))).toEqual(
      refusal(422, 'validation_failed', 'If-None-Match must be * (create only)', 'If-None-Match'),
    );
    expect(answer(await api.put(`${put}?dry_run=maybe`, product))).toEqual(
      refusal(422, 'validation_failed', 'dry_run must be true or false.', 'dry_run'),
    );
    await api.put(put, product);
    const k = idemKey();
    const stock = (headers: Record<string, string>) =>
      api.post(`${put}/stock`, { delta: 1 }, { 'Idempotency-Key': k, ...headers });
    expect(answer(await stock({ 'If-Match': 'abc' }))).toEqual(refusal(422, 'validation_failed', tags, 'If-Match'));
    expect(answer(await stock({ 'If-Match': 'abc' }))).toEqual(
      refusal(422, 'validation_failed', tags, 'If-Match', { replayed: 'true' }),
    );
  });
});

describe("the edge: the MCP tool arguments' refusals, whole", () => {
  const connect = useMcpClients('refusal-answers-edge');
  it('answers idempotency_key and dry_run as tool errors', async () => {
    const { storeId, key } = await storeWithKey(['orders:read', 'orders:write-status', 'catalog:write']);
    const order = await insertTestOrder(storeId, { status: 'pending' });
    const mcp = await connect(key.token);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await mcp.callTool({ name, arguments: args });
      return { isError: result.isError, doc: result.structuredContent };
    };
    const error = (code: string, message: string, field: string | null) => ({
      isError: true,
      doc: { code, message, field },
    });
    const move = { reference: order.reference, status: 'processing' };
    expect(await call('set_order_status', move)).toEqual(
      error('idempotency_key_required', 'The idempotency_key argument is required.', 'idempotency_key'),
    );
    expect(await call('set_order_status', { ...move, idempotency_key: 42 })).toEqual(
      error('validation_failed', 'idempotency_key must be a string, got number', 'idempotency_key'),
    );
    expect(await call('set_order_status', { ...move, idempotency_key: '"open' })).toEqual(
      error('validation_failed', 'idempotency_key is not a valid quoted string (RFC 8941).', 'idempotency_key'),
    );
    expect(await call('upsert_product', { external_id: xid('edge'), name: 'Oak', price: 1, dry_run: 'yes' })).toEqual(
      error('validation_failed', 'dry_run must be a boolean.', 'dry_run'),
    );
  });
});

describe("the edge: the MCP transport's refusals, whole", () => {
  it('answers a foreign Origin 403, a body nested too deep 400 and one too large 413', async () => {
    const { key } = await storeWithKey(['catalog:read']);
    const mcp = client(key.token, { undocumented: true });
    const accept = { Accept: 'application/json, text/event-stream' };
    const list = '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}';
    expect(answer(await mcp.post('/mcp', list, { ...accept, Origin: 'https://evil.example' }))).toEqual(
      refusal(403, 'forbidden', 'Requests from another web origin are refused (Origin header).', null),
    );
    const deep = `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`;
    expect(answer(await mcp.post('/mcp', deep, accept))).toEqual(
      refusal(400, 'invalid_json', 'The request body nests deeper than 32 levels.', null),
    );
    const large = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(1024 * 1024) } });
    expect(answer(await mcp.post('/mcp', large, accept))).toEqual(
      refusal(413, 'payload_too_large', 'The request body is larger than 1048576 bytes.', null),
    );
  });
});
