import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { storeWithKey } from '#fixtures/api.ts';
import { adjustStock } from '#app/stock.ts';
import { idempotentRequest } from '#app/idempotent-commit.ts';

/**
 * The stock use case called in-process against DynamoDB Local: what the caller caused comes back
 * as a value (shared/domain/outcome.ts), for the route to present; only faults are thrown.
 */
describe('adjustStock', () => {
  const request = (keyId: number, body: unknown) =>
    idempotentRequest({ keyId, method: 'POST', path: '/stock', key: randomUUID() }, body);

  it('returns the stock refusals and a missing product as outcomes, writing nothing', async () => {
    const { storeId, key, client: api } = await storeWithKey(['catalog:read', 'catalog:write']);
    expect(
      (await api.put('/catalog/products/uc-1', { name: 'Stool', price: 100, sku: 'S-1', quantity: 2 })).status,
    ).toBe(200);
    const caller = { storeId, keyId: key.id, currency: 'EUR' };
    const run = (externalId: string, delta: Record<string, unknown>) =>
      adjustStock(caller, externalId, delta as never, request(key.id, delta));

    expect(await run('uc-1', { delta: -3 })).toMatchObject({
      kind: 'refused',
      code: 'insufficient_stock',
      field: 'delta',
    });
    expect(await run('uc-1', { delta: -1, expected_quantity: 5 })).toMatchObject({
      kind: 'refused',
      code: 'quantity_changed',
      field: 'expected_quantity',
    });
    expect(await run('uc-1', { delta: 1, sku: 'NONE' })).toMatchObject({
      kind: 'refused',
      code: 'validation_failed',
      field: 'sku',
    });
    expect(await run('uc-none', { delta: 1 })).toMatchObject({ kind: 'refused', code: 'not_found' });
    // None of them wrote: the quantity is what the PUT set.
    expect((await api.get('/catalog/products/uc-1?include=offers')).body.data.offers[0].quantity).toBe(2);
    expect(await run('uc-1', { delta: -2 })).toMatchObject({ kind: 'answered' });
  });
});
