import path from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { startRehearsal, type RehearsalStack } from '#emulation/rehearsal/stack.ts';
import { synthesize } from '#emulation/rehearsal/synth.ts';
import { freePort } from '#fixtures/free-port.ts';

/**
 * The IAM check bites: the app synthesized with one grant removed (test/rehearsal/app-without-grant.ts)
 * runs, reads still work, and the write that needs the grant is refused by the policy evaluator,
 * reported with function, action and resource, and fails as in AWS (the Lambda's SDK call gets
 * AccessDeniedException; the client gets the gateway's 5xx, no data written).
 */
const DROPPED = 'dynamodb:PutItem';
let stack: RehearsalStack;
let lambda: LambdaClient;

async function admin(command: string, args: Record<string, unknown>) {
  const fn = stack.functions.find((f) => /AdminFunction/.test(f.logicalId))!;
  const out = await lambda.send(
    new InvokeCommand({ FunctionName: fn.name, Payload: Buffer.from(JSON.stringify({ command, args })) }),
  );
  expect(out.FunctionError).toBeUndefined();
  return JSON.parse(Buffer.from(out.Payload!).toString('utf8')) as { ok: boolean; data: Record<string, unknown> };
}

beforeAll(async () => {
  const outDir = path.resolve('.rehearsal/without-grant.out');
  await synthesize({
    outDir,
    app: 'npx tsx test/rehearsal/app-without-grant.ts',
    context: { 'rehearsal:dropGrant': `CatalogFunction=${DROPPED}` },
    validation: false,
  });
  stack = await startRehearsal({
    assemblyDir: outDir,
    port: 0,
    dynamodbPort: await freePort(),
    dataDir: null,
    envOverrides: { LOG_LEVEL: 'error' },
  });
  lambda = new LambdaClient({
    endpoint: stack.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'operator', secretAccessKey: 'x' },
  });
});

afterAll(async () => {
  lambda?.destroy();
  await stack?.stop();
});

describe('rehearsal: a grant missing from the CDK code', () => {
  it('refuses the call that needs it, names function, action and resource, and the request fails as in AWS', async () => {
    const storeId = `s-${Date.now()}`;
    expect((await admin('stores create', { id: storeId, name: 'Rehearsal', currency: 'EUR' })).ok).toBe(true);
    const created = await admin('keys create', { store: storeId, name: 'k', abilities: 'catalog:read,catalog:write' });
    expect(created, JSON.stringify(created)).toMatchObject({ ok: true });
    const key = created.data as { token: string };
    const api = `${stack.url}${API_BASE_PATH}`;
    const headers = { authorization: `Bearer ${key.token}`, 'content-type': 'application/json' };

    const read = await fetch(`${api}/products`, { headers });
    expect(read.status).toBe(200);
    expect(stack.denials).toEqual([]);

    const write = await fetch(`${api}/catalog/products/p-1`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ name: 'Mug', price: 1200 }),
    });
    expect([500, 502]).toContain(write.status);
    expect(await write.json()).toMatchObject({ code: 'internal_error' });

    const table = stack.tables[0]!;
    expect(stack.denials).toContainEqual(
      expect.objectContaining({
        function: expect.stringContaining('CatalogFunction'),
        action: DROPPED,
        resource: table.arn,
        result: 'ImplicitlyDenied',
      }),
    );
    const after = await fetch(`${api}/products`, { headers });
    expect(((await after.json()) as { data: unknown[] }).data).toEqual([]);
  });
});
