import { afterEach, describe, expect, it, vi } from 'vitest';
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { adminCommand, client, createKey, createStore, storeWithKey } from '../fixtures/api.ts';
import { db } from '../../shared/db/client.ts';
import { baseUrl } from '../fixtures/api.ts';
import { idemKey, placeOrder } from '../fixtures/orders.ts';

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
      (cmd) => cmd instanceof TransactWriteCommand && (cmd.input.TransactItems ?? []).some((i) => i.Delete !== undefined),
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
      (cmd) => cmd instanceof TransactWriteCommand && (cmd.input.TransactItems ?? []).some((i) => i.Delete !== undefined),
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

  it('§11/§5: MCP tool calls count against the rate limit one by one, also inside a JSON-RPC batch', async () => {
    const { key, client: api } = await storeWithKey(['orders:read']);
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_orders', arguments: {} } });
    const res = await fetch(`${baseUrl()}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key.token}`,
        Accept: 'application/json, text/event-stream',
        'Content-Type': 'application/json',
        'MCP-Protocol-Version': '2025-03-26',
      },
      body: JSON.stringify(Array.from({ length: 100 }, (_, i) => call(i + 1))),
    });
    const text = await res.text();
    // Either a batch is refused, or 100 tool calls used (at least) 100 units of a 60/min allowance.
    const answered = res.status === 200 ? (JSON.parse(text) as { result?: { isError?: boolean } }[]).filter((r) => r.result && !r.result.isError).length : 0;
    expect(answered).toBeLessThanOrEqual(60);
    const next = await api.get('/orders?limit=1');
    if (answered > 0) expect(next.status).toBe(429);
  });

  it('§8: the idempotency scope is the resource, not the spelling of its path (":" raw or %3A)', async () => {
    const storeId = await createStore();
    const key = await createKey(storeId, ['orders:read', 'orders:write-status']);
    const api = client(key.token);
    const reference = `ORD:${Date.now()}`;
    await placeOrder(storeId, { reference });
    const k = idemKey();
    const first = await api.post(`/orders/${encodeURIComponent(reference)}/status`, { status: 'processing' }, { 'Idempotency-Key': k });
    expect(first.status).toBe(200);
    const moved = await api.post(`/orders/${encodeURIComponent(reference)}/status`, { status: 'shipped' }, { 'Idempotency-Key': idemKey() });
    expect(moved.status).toBe(200);
    // The client retries the first request; its HTTP library spells the reference without escaping.
    const retry = await api.post(`/orders/${reference}/status`, { status: 'processing' }, { 'Idempotency-Key': k });
    expect(retry.status).toBe(200);
    expect(retry.text).toBe(first.text);
  });
});
