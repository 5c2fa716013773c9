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
      message: `store ${storeId} has no event ${eventId} (events are kept 7 days)`,
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
