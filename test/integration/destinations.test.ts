import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { adminCommand, client, createKey, createStore } from '#fixtures/api.ts';
import { idem } from '#fixtures/content.ts';
import { placeOrder, statusPath } from '#fixtures/orders.ts';
import { recordedDeliveries, startReceiver, waitFor } from '#fixtures/webhooks.ts';
import { integratorSide, INTEGRATOR_ACCOUNT } from '#fixtures/destinations.ts';
import { handler as admin } from '#functions/admin/handler.ts';

/**
 * SQS and EventBridge destinations on the shared local stack (docs/destinations.md): the stack's
 * own fan-out and signer deliver into a queue on its SQS emulator and onto a bus of its EventBridge
 * stand-in, assuming the integrator's role through its STS stand-in with each key's external id.
 */
const endpoints = { sqs: inject('sqsEndpoint'), integrator: inject('integratorEndpoint') };
const side = integratorSide(endpoints);
afterAll(() => side.close());

type Key = Awaited<ReturnType<typeof createKey>> & { aws_external_id: string };
const EVENTS = 'order.created,order.paid,product.updated:price';

describe('SQS and EventBridge destinations', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it('deliver to a queue and to a bus every event a webhook key with the same filter receives, byte for byte', async () => {
    const store = await createStore();
    const abilities = ['orders:read', 'catalog:read'] as const;
    const hook = await createKey(store, abilities, { webhook_url: receiver.url, events: EVENTS });
    const queued = (await createKey(store, abilities, { events: EVENTS })) as Key;
    const bussed = (await createKey(store, abilities, { events: EVENTS })) as Key;
    expect(queued.aws_external_id).toMatch(/^sie_[0-9a-f]{32}$/);
    expect(bussed.aws_external_id).not.toBe(queued.aws_external_id);

    const queueUrl = await side.queue(false);
    const busArn = await side.bus();
    const sqsKey = await adminCommand<Record<string, any>>('keys set-destination', {
      id: queued.id,
      sqs_queue_url: queueUrl,
      role_arn: await side.role(queued.aws_external_id),
    });
    expect(sqsKey.destination).toMatchObject({ kind: 'sqs', queue_url: queueUrl, fifo: false });
    expect(sqsKey.webhook_url).toBeNull();
    await adminCommand('keys set-destination', {
      id: bussed.id,
      eventbridge_bus_arn: busArn,
      role_arn: await side.role(bussed.aws_external_id),
    });
    const listed = (await adminCommand<{ data: Record<string, any>[] }>('keys list', { store })).data;
    expect(listed.find((k) => k.id === bussed.id)?.destination).toMatchObject({ kind: 'eventbridge', bus_arn: busArn });
    expect(listed.find((k) => k.id === hook.id)?.destination).toEqual({ kind: 'webhook', url: receiver.url });

    // Events the filter passes (a price change, an order placed and paid) and ones it leaves out (a
    // create, a name-only change, a status move).
    const writer = client((await createKey(store, ['catalog:write', 'orders:write-status'])).token);
    const ok = (res: { status: number; text: string }) => expect(res.status, res.text).toBe(200);
    ok(await writer.put('/catalog/products/p1', { name: 'Oak chair', price: 100 }));
    ok(await writer.put('/catalog/products/p1', { name: 'Oak chair', price: 120 }));
    ok(await writer.put('/catalog/products/p1', { name: 'Oak stool', price: 120 }));
    const order = await placeOrder(store);
    await adminCommand('orders mark-paid', { store, reference: order.reference });
    ok(await writer.post(statusPath(order.reference), { status: 'processing' }, { 'Idempotency-Key': idem() }));

    const webhookBodies = () => new Map(receiver.received.map((r) => [r.headers['webhook-id'], r.body]));
    await waitFor('the webhook key’s three events', () => webhookBodies().size === 3, 300_000, 250);
    const fromQueue = new Map<string, { body: string; attributes: Record<string, string | undefined> }>();
    await waitFor(
      'the same three on the queue',
      async () => {
        for (const m of await side.drain(queueUrl)) {
          const a = m.MessageAttributes ?? {};
          fromQueue.set(a.event_id!.StringValue!, {
            body: m.Body!,
            attributes: Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v.StringValue])),
          });
        }
        return fromQueue.size >= 3;
      },
      300_000,
      250,
    );
    await waitFor('the same three on the bus', async () => (await side.busEvents(busArn)).length >= 3, 300_000, 250);

    const expected = webhookBodies();
    const types = [...expected.values()].map((b) => (JSON.parse(b) as { type: string }).type).sort();
    expect(types).toEqual(['order.created', 'order.paid', 'product.updated']);
    expect(new Map([...fromQueue].map(([id, m]) => [id, m.body]))).toEqual(expected);
    for (const [id, m] of fromQueue) {
      const body = JSON.parse(m.body) as { type: string; sequence: number };
      expect(m.attributes).toEqual({ event_id: id, event_type: body.type, sequence: String(body.sequence) });
    }
    const onBus = await side.busEvents(busArn);
    expect(new Map(onBus.map((e) => [(JSON.parse(e.detail) as { id: string }).id, e.detail]))).toEqual(expected);
    for (const e of onBus) {
      const body = JSON.parse(e.detail) as { type: string; timestamp: string };
      expect(e).toMatchObject({
        bus: busArn,
        source: 'store-integration-api',
        detail_type: body.type,
        time: body.timestamp,
      });
      expect(e.role).toMatch(new RegExp(`^arn:aws:iam::${INTEGRATOR_ACCOUNT}:role/store-events-`));
    }
    // Delivered once each, the log says so. The signer records an attempt after the destination
    // took the message, so under load the log may trail what the queue and the bus already hold.
    for (const key of [queued, bussed]) {
      const log = await recordedDeliveries(key.id, 3);
      expect(log.map((d) => d.state)).toEqual(['delivered', 'delivered', 'delivered']);
    }
  }, 600_000);

  it('keeps a FIFO queue in sequence order per family, and a redelivery goes again though the group moved on', async () => {
    const store = await createStore();
    const key = (await createKey(store, ['orders:read', 'catalog:read'], {
      events: 'order.created,order.paid,product.created',
    })) as Key;
    const queueUrl = await side.queue(true);
    await adminCommand('keys set-destination', {
      id: key.id,
      sqs_queue_url: queueUrl,
      role_arn: await side.role(key.aws_external_id),
    });
    const writer = client((await createKey(store, ['catalog:write'])).token);
    const orders = [await placeOrder(store), await placeOrder(store)];
    expect((await writer.put('/catalog/products/p1', { name: 'Oak chair', price: 100 })).status).toBe(200);
    for (const o of orders) await adminCommand('orders mark-paid', { store, reference: o.reference });

    const got: { id: string; sequence: number; group: string; dedup: string }[] = [];
    const read = async () => {
      for (const m of await side.drain(queueUrl))
        got.push({
          id: m.MessageAttributes!.event_id!.StringValue!,
          sequence: Number(m.MessageAttributes!.sequence!.StringValue),
          group: m.Attributes!.MessageGroupId!,
          dedup: m.Attributes!.MessageDeduplicationId!,
        });
      return got.length >= 5;
    };
    await waitFor('five events on the FIFO queue', read, 300_000, 250);
    const inGroup = (g: string) => got.filter((e) => e.group === `${store}:${g}`).map((e) => e.sequence);
    expect(inGroup('orders')).toHaveLength(4);
    expect(inGroup('orders')).toEqual([...inGroup('orders')].sort((a, b) => a - b));
    expect(inGroup('catalog')).toHaveLength(1);
    expect(got.every((e) => e.dedup === e.id)).toBe(true);

    const first = got[0]!;
    await adminCommand('webhooks redeliver', { id: key.id, event: first.id });
    got.length = 0;
    await waitFor('the redelivery on the queue', async () => (await read(), got.length >= 1), 300_000, 250);
    expect(got).toEqual([{ ...first, dedup: `${first.id}-r1` }]);
  }, 600_000);

  it('pings a queue and a bus with a webhook.ping, and says why not when the role refuses the external id', async () => {
    const store = await createStore();
    const key = (await createKey(store, ['orders:read'])) as Key;
    const queueUrl = await side.queue(true);
    const role = await side.role(key.aws_external_id);
    await adminCommand('keys set-destination', { id: key.id, sqs_queue_url: queueUrl, role_arn: role });
    // The worker pings itself (no SIGNER_FUNCTION_NAME), through the stack's stand-ins.
    process.env.AWS_ENDPOINT_URL_SQS = endpoints.sqs;
    process.env.AWS_ENDPOINT_URL_STS = endpoints.integrator;
    process.env.AWS_ENDPOINT_URL_EVENTBRIDGE = endpoints.integrator;
    process.env.AWS_ACCESS_KEY_ID ||= 'local';
    process.env.AWS_SECRET_ACCESS_KEY ||= 'local';

    const ping = await adminCommand<Record<string, any>>('webhooks ping', { id: key.id });
    expect(ping).toMatchObject({ type: 'webhook.ping', status: 200, delivered: true, error: null, url: null });
    const [message] = await side.drain(queueUrl);
    expect(JSON.parse(message!.Body!)).toMatchObject({
      type: 'webhook.ping',
      data: { key_id: key.id, store_id: store },
    });
    expect(message!.Attributes).toMatchObject({
      MessageGroupId: `${store}:ping`,
      MessageDeduplicationId: ping.event_id,
    });

    // A role whose trust names another external id (a session already taken stays valid until it
    // expires, as AWS's do: so another key and role).
    const other = (await createKey(store, ['orders:read'])) as Key;
    const refusing = await side.role('sie_00000000000000000000000000000000');
    await adminCommand('keys set-destination', { id: other.id, sqs_queue_url: queueUrl, role_arn: refusing });
    const refused = await adminCommand<Record<string, any>>('webhooks ping', { id: other.id });
    expect(refused).toMatchObject({ delivered: false, status: 403 });
    expect(refused.error).toMatch(new RegExp(`^assume role ${refusing}: AccessDenied: .*sts:AssumeRole`));
    expect(await side.drain(queueUrl)).toEqual([]);

    const busKey = (await createKey(store, ['orders:read'])) as Key;
    const busArn = await side.bus();
    await adminCommand('keys set-destination', {
      id: busKey.id,
      eventbridge_bus_arn: busArn,
      role_arn: await side.role(busKey.aws_external_id),
    });
    expect(await adminCommand('webhooks ping', { id: busKey.id })).toMatchObject({ delivered: true, status: 200 });
    expect((await side.busEvents(busArn)).map((e) => e.detail_type)).toEqual(['webhook.ping']);
  });

  it('refuses a destination it cannot use, one field at a time, and changes nothing', async () => {
    const store = await createStore();
    const key = (await createKey(store, ['orders:read'], { webhook_url: receiver.url })) as Key;
    const good = { id: key.id, sqs_queue_url: await side.queue(false), role_arn: await side.role(key.aws_external_id) };
    const refusal = async (args: Record<string, unknown>) => {
      const out = await admin({ command: 'keys set-destination', args });
      return out.ok ? out : out.error;
    };
    expect(await refusal({ ...good, role_arn: `arn:aws:iam::${INTEGRATOR_ACCOUNT}:role/crm-events` })).toMatchObject({
      code: 'validation_failed',
      field: 'role_arn',
    });
    expect(
      await refusal({ ...good, role_arn: `arn:aws:iam::${INTEGRATOR_ACCOUNT}:role/path/store-events-x` }),
    ).toMatchObject({
      field: 'role_arn',
    });
    expect(await refusal({ ...good, sqs_queue_url: 'https://crm.example.com/queue' })).toMatchObject({
      code: 'validation_failed',
      field: 'sqs_queue_url',
    });
    expect(
      await refusal({ ...good, eventbridge_bus_arn: `arn:aws:events:us-east-1:${INTEGRATOR_ACCOUNT}:event-bus/b` }),
    ).toMatchObject({
      field: 'sqs_queue_url',
    });
    const { sqs_queue_url: _q, ...noTarget } = good;
    expect(await refusal(noTarget)).toMatchObject({ field: 'sqs_queue_url' });
    expect(
      await refusal({ ...noTarget, eventbridge_bus_arn: 'arn:aws:sns:us-east-1:111122223333:topic' }),
    ).toMatchObject({
      field: 'eventbridge_bus_arn',
    });
    expect(await refusal({ ...good, id: 999_999_999 })).toMatchObject({ code: 'not_found', field: 'id' });
    // Nothing changed: the webhook is still the key's destination.
    const listed = (await adminCommand<{ data: Record<string, any>[] }>('keys list', { store })).data;
    expect(listed.find((k) => k.id === key.id)?.destination).toEqual({ kind: 'webhook', url: receiver.url });

    await adminCommand('keys revoke', { id: key.id });
    expect(await refusal(good)).toMatchObject({ code: 'invalid_transition', field: 'id' });
  });

  it('keeps a key’s external id: set-webhook --url removes a queue, external-id shows the same id', async () => {
    const store = await createStore();
    const key = (await createKey(store, ['orders:read'])) as Key;
    await adminCommand('keys set-destination', {
      id: key.id,
      sqs_queue_url: await side.queue(false),
      role_arn: await side.role(key.aws_external_id),
    });
    expect(await adminCommand('keys external-id', { id: key.id })).toEqual({
      key_id: key.id,
      aws_external_id: key.aws_external_id,
    });
    const removed = await adminCommand<Record<string, unknown>>('keys set-webhook', { id: key.id, url: '' });
    expect(removed).toMatchObject({ destination: null, webhook_url: null, aws_external_id: key.aws_external_id });
    const rotated = await adminCommand<Record<string, unknown>>('keys rotate', { id: key.id });
    expect(rotated.aws_external_id).toBe(key.aws_external_id);
  });
});
