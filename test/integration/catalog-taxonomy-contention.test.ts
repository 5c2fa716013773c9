import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { client, storeWithKey } from '#fixtures/api.ts';
import { putTag } from '#app/taxonomy.ts';
import { db, rawDb, tableName } from '#db/core/client.ts';
import { keys } from '#db/keys.ts';
import { createGateway } from '#emulation/local/gateway.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { setLogSink } from '#shared/log.ts';

/**
 * Another writer that wins every round of one category or tag: before each transaction that
 * writes the item it moves the item's `updated_at`, as a rename that committed first would, so
 * the round's guard fails. On this worker's DynamoDB client, which the gateway below runs the
 * handlers with.
 */
function winEveryRoundOf(item: { pk: string; sk: string }) {
  const name = `racing-writer-${randomUUID()}`;
  let at = Date.now() + 60_000;
  let won = 0;
  rawDb().middlewareStack.add(
    (next, context) => async (args) => {
      const input = JSON.stringify((args as { input?: unknown }).input);
      if (context.commandName === 'TransactWriteItemsCommand' && input.includes(item.pk) && input.includes(item.sk)) {
        await db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: item,
            UpdateExpression: 'SET updated_at = :t',
            ExpressionAttributeValues: { ':t': new Date(at++).toISOString() },
          }),
        );
        won++;
      }
      return next(args);
    },
    { step: 'initialize', name, priority: 'high' },
  );
  return { won: () => won, stop: () => rawDb().middlewareStack.remove(name) };
}

/**
 * A rename that keeps losing to other writers of its category or tag is the tenant's own
 * contention, as for a product (docs/catalog-writes.md, "One hot product"): 429 `resource_busy`
 * with Retry-After, nothing written, never a 500.
 */
describe('a category or tag write that keeps losing to other writers', () => {
  let server: Server;
  let base = '';
  beforeAll(async () => {
    setLogSink((line) => void (line.startsWith('{"_aws"') || process.stdout.write(`${line}\n`)));
    server = createGateway();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    setLogSink((line) => process.stdout.write(`${line}\n`));
  });

  it('answers PUT of a category 429 resource_busy with Retry-After and leaves its name', async () => {
    const { key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const api = client(key.token, { base });
    const path = '/catalog/categories/hot-cat';
    expect((await api.put(path, { name: 'Chairs' })).status).toBe(200);

    const racing = winEveryRoundOf(keys.category(key.id, 'hot-cat'));
    let res: Awaited<ReturnType<typeof api.put>>;
    try {
      res = await api.put(path, { name: 'Stools' });
    } finally {
      racing.stop();
    }
    expect(res.status, res.text).toBe(429);
    expect(res.body).toMatchObject({ code: 'resource_busy', field: null });
    expect(res.headers.get('retry-after')).toBe('1');
    expect(racing.won()).toBeGreaterThanOrEqual(1);
    // Nothing was written: the same PUT once the other writer is gone renames it.
    const again = await api.put(path, { name: 'Stools' });
    expect(again.status).toBe(200);
    expect(again.body.data.name).toBe('Stools');
  });

  it('returns the refusal from the use case as a value, not an exception', async () => {
    const { storeId, key } = await storeWithKey(['catalog:read', 'catalog:write']);
    const caller = { storeId, keyId: key.id };
    expect(await putTag(caller, 'hot-tag', 'sale')).toMatchObject({ value: 'sale' });
    const racing = winEveryRoundOf(keys.tag(key.id, 'hot-tag'));
    try {
      expect(await putTag(caller, 'hot-tag', 'clearance')).toMatchObject({
        kind: 'refused',
        code: 'resource_busy',
        retryAfterSeconds: 1,
      });
    } finally {
      racing.stop();
    }
  });
});
