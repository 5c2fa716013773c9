import { describe, expect, it } from 'vitest';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { storeWithKey } from '#fixtures/api.ts';
import { patchResolved } from '#app/product-writes.ts';
import { resolveWriteTargets } from '#db/product/item.ts';
import { db, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';

/** The store's events written so far (outbox items, written in each change's transaction). */
async function outboxCount(storeId: string): Promise<number> {
  const { pk } = keys.outboxEvent(storeId, '');
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :event)',
      ExpressionAttributeValues: { ':pk': pk, ':event': 'EVENT#' },
      Select: 'COUNT',
      ConsistentRead: true,
    }),
  );
  return out.Count ?? 0;
}

/**
 * A single write contended past its bound (docs/catalog-writes.md, "One hot product") is refused
 * with the retryable 503 and has changed nothing. The write starts from targets read before a
 * racing PATCH committed, so its first round loses on the guard: with a bound of one call it may
 * not start a second.
 */
describe('contention bound of a product write', () => {
  it('refuses a write past its bound with the retryable 503, having written no event and left the ETag', async () => {
    const { storeId, key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    const path = '/catalog/products/bound-1';
    expect((await api.put(path, { name: 'Bounded', price: 100 })).status).toBe(200);
    const caller = { storeId, keyId: key.id };
    const before = await resolveWriteTargets(key.id, 'bound-1');

    const racing = await api.patch(path, { price: 200 });
    expect(racing.status).toBe(200);
    const events = await outboxCount(storeId);

    const refused = await patchResolved(caller, { price: 300 }, before, {}, { calls: 1, ms: 60_000 }).catch(
      (e: unknown) => e,
    );
    expect(refused).toMatchObject({ code: 'service_unavailable', retryAfterSeconds: 1 });
    const after = await api.get(path);
    expect(after.headers.get('etag')).toBe(racing.headers.get('etag'));
    expect(after.body.data).toEqual(racing.body.data);
    expect(await outboxCount(storeId)).toBe(events);

    // With room for the round after the lost one, the same write applies onto the racing write's state.
    const applied = await patchResolved(caller, { price: 300 }, before, {}, { calls: 2, ms: 60_000 });
    expect(applied).toMatchObject({ result: 'updated' });
    const now = await api.get(path);
    expect(now.body.data.min_price).toBe(300);
    expect(now.headers.get('etag')).not.toBe(racing.headers.get('etag'));
    expect(await outboxCount(storeId)).toBe(events + 1);
  });
});
