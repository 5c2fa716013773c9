import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { adminCommand, client, createKey, createStore, storeWithKey } from '#fixtures/api.ts';
import { db } from '#db/core/client.ts';
import { baseUrl } from '#fixtures/api.ts';
import { eventsOfOrder, idemKey, insertTestOrder, placeOrder } from '#fixtures/orders.ts';
import { lambdaEvent } from '#fixtures/lambda-cost.ts';
import { handler as ordersHandler } from '#functions/orders/handler.ts';
import type { Context } from 'aws-lambda';

/** One MCP tool call, one JSON-RPC message per POST (batches are refused). */
async function mcpCall(token: string, id: number, name: string, args: Record<string, unknown>) {
  const res = await fetch(`${baseUrl()}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
      'MCP-Protocol-Version': '2025-03-26',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
  });
  return { status: res.status, body: (await res.json()) as { result: { isError?: boolean; structuredContent: any } } };
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Holds the first DynamoDB call that `match` picks until `release()`; everything else passes. */
function holdCall(match: (cmd: unknown) => boolean) {
  const client = db();
  const original = client.send.bind(client);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const arrived = new Promise<void>((r) => (reached = r));
  let held = false;
  vi.spyOn(client, 'send').mockImplementation(((cmd: unknown, ...rest: unknown[]) => {
    if (!held && match(cmd)) {
      held = true;
      reached();
      return gate.then(() => (original as any)(cmd, ...rest));
    }
    return (original as any)(cmd, ...rest);
  }) as never);
  return { release, arrived };
}

describe('races and bypasses found in review', () => {
  it('§3: a key revoked while a rotation is in flight stays revoked (the new token is refused)', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read']);
    // Hold the rotation's transaction (it deletes the old token item) until the revoke has committed.
    const hold = holdCall(
      (cmd) =>
        cmd instanceof TransactWriteCommand && (cmd.input.TransactItems ?? []).some((i) => i.Delete !== undefined),
    );
    const rotating = adminCommand<{ token: string }>('keys rotate', { id: key.id });
    await hold.arrived;
    const revoked = await adminCommand<{ status: string }>('keys revoke', { id: key.id });
    expect(revoked.status).toBe('revoked');
    hold.release();
    const rotated = await rotating.catch(() => undefined);
    vi.restoreAllMocks();
    const listed = await adminCommand<{ data: { id: number; status: string }[] }>('keys list', { store: storeId });
    expect(listed.data.find((k) => k.id === key.id)?.status).toBe('revoked');
    if (rotated) {
      const res = await client(rotated.token).get('/orders');
      expect(res.status).toBe(401);
    }
  });

  it('§5: rotating a key mid-burst does not reset its allowance (no 61st request within 60 s)', async () => {
    const { key, client: api } = await storeWithKey(['orders:read']);
    // The rotation reads the old token item (and its rate-limit slots) first, then swaps the items.
    const hold = holdCall(
      (cmd) =>
        cmd instanceof TransactWriteCommand && (cmd.input.TransactItems ?? []).some((i) => i.Delete !== undefined),
    );
    const rotating = adminCommand<{ token: string }>('keys rotate', { id: key.id });
    await hold.arrived;
    const burst = await Promise.all(Array.from({ length: 60 }, () => api.get('/orders?limit=1')));
    expect(burst.filter((r) => r.status === 200)).toHaveLength(60);
    hold.release();
    const rotated = await rotating;
    vi.restoreAllMocks();
    const after = await client(rotated.token).get('/orders?limit=1');
    expect(after.status).toBe(429);
  });

  it('§11/§5: concurrent MCP tool calls each take their own slot of the rate limit (no slot claimed twice)', async () => {
    const { key, client: api } = await storeWithKey(['orders:read']);
    const burst = await Promise.all(Array.from({ length: 70 }, (_, i) => mcpCall(key.token, i + 1, 'list_orders', {})));
    const answered = burst.filter((r) => r.status === 200 && r.body.result && !r.body.result.isError).length;
    expect(burst.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    expect(answered).toBeGreaterThan(0);
    // A slot is claimed by a conditional write; a burst can crowd some calls out (429) early.
    // Fill what the burst left, one request at a time: the window holds exactly 60, so two calls
    // that shared a slot would leave one slot too many here.
    let after = 0;
    while ((await api.get('/orders?limit=1')).status === 200) after++;
    expect(answered + after).toBe(60);
  }, 300_000);

  it('§4/§11: ten concurrent MCP status changes of one order write one change and one event', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read', 'orders:write-status']);
    const order = await placeOrder(storeId, { reference: `MCP-${Date.now()}` });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        mcpCall(key.token, i + 1, 'set_order_status', {
          reference: order.reference,
          status: 'cancelled',
          idempotency_key: idemKey(),
        }),
      ),
    );
    const docs = results.map((r) => {
      expect(r.status).toBe(200);
      return { isError: r.body.result.isError === true, doc: r.body.result.structuredContent };
    });
    const changed = docs.filter((d) => !d.isError);
    expect(changed.length).toBeGreaterThan(0);
    for (const d of changed) expect(d.doc.data).toMatchObject({ reference: order.reference, status: 'cancelled' });
    for (const d of docs.filter((x) => x.isError)) expect(d.doc.code).toBe('conflict');
    const events = await eventsOfOrder(storeId, order.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload.data).toMatchObject({ previous_status: 'pending', status: 'cancelled' });
  });

  it('§8: the idempotency scope is the resource, not the spelling of its path (":" raw or %3A)', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read', 'orders:write-status']);
    const api = client(key.token);
    const reference = `ORD:${Date.now()}`;
    await placeOrder(storeId, { reference });
    const k = idemKey();
    const first = await api.post(
      `/orders/${encodeURIComponent(reference)}/status`,
      { status: 'processing' },
      { 'Idempotency-Key': k },
    );
    expect(first.status).toBe(200);
    const moved = await api.post(
      `/orders/${encodeURIComponent(reference)}/status`,
      { status: 'shipped' },
      { 'Idempotency-Key': idemKey() },
    );
    expect(moved.status).toBe(200);
    // The client retries the first request; its HTTP library spells the reference without escaping.
    const retry = await api.post(`/orders/${reference}/status`, { status: 'processing' }, { 'Idempotency-Key': k });
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
  });
});

describe('§8: twins with one Idempotency-Key, the record written only in the commit', () => {
  const context = { awsRequestId: 'twin', getRemainingTimeInMillis: () => 10_000 } as unknown as Context;
  const holdsRecord = (cmd: unknown) =>
    cmd instanceof TransactWriteCommand &&
    (cmd.input.TransactItems ?? []).some((i) => String(i.Put?.Item?.sk ?? '').startsWith('IDEMPOTENCY#'));
  const statusEvent = (storeId: string, reference: string, status: string, key: string) =>
    lambdaEvent(storeId, 777_001, 'setOrderStatus', {
      path: `/orders/${reference}/status`,
      params: { reference },
      body: { status },
      headers: { 'idempotency-key': key },
    });

  it('the first, whose commit is held while its twin commits, loses on the record and answers the twin’s bytes; one change, one event', async () => {
    const storeId = await createStore();
    const order = await insertTestOrder(storeId, { status: 'paid' });
    const k = idemKey();
    const hold = holdCall(holdsRecord);
    const first = ordersHandler(statusEvent(storeId, order.reference, 'processing', k), context);
    await hold.arrived;
    const twin = await ordersHandler(statusEvent(storeId, order.reference, 'processing', k), context);
    expect(twin.statusCode).toBe(200);
    hold.release();
    const held = await first;
    expect(held.statusCode).toBe(200);
    expect(held.body).toBe(twin.body);
    expect(await eventsOfOrder(storeId, order.id)).toHaveLength(1);
  });

  it('with another body, the held first answers 422 idempotency_key_reused and its change is not written', async () => {
    const storeId = await createStore();
    const order = await insertTestOrder(storeId, { status: 'paid' });
    const k = idemKey();
    const hold = holdCall(holdsRecord);
    const first = ordersHandler(statusEvent(storeId, order.reference, 'cancelled', k), context);
    await hold.arrived;
    const twin = await ordersHandler(statusEvent(storeId, order.reference, 'processing', k), context);
    expect(twin.statusCode).toBe(200);
    hold.release();
    const held = await first;
    expect(held.statusCode).toBe(422);
    expect(JSON.parse(held.body).code).toBe('idempotency_key_reused');
    const events = await eventsOfOrder(storeId, order.id);
    expect(events.map((e) => e.payload.data.status)).toEqual(['processing']);
  });
});
