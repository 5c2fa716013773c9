import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { startRehearsal, type RehearsalStack } from '#emulation/rehearsal/stack.ts';
import type { Template } from '#emulation/rehearsal/template.ts';
import { freePort } from '#fixtures/free-port.ts';

/**
 * The IAM check bites: the app with one grant removed runs, reads still work, and the write that
 * needs the grant is refused by the policy evaluator, reported with function, action and resource,
 * and fails as in AWS (the Lambda's SDK call gets AccessDeniedException; the client gets the
 * gateway's 5xx, no data written).
 *
 * The app without the grant is the run's own assembly with that action taken out of the catalog
 * function's role policies (withoutGrant below): the templates are all the IAM check reads, and
 * the bundles are the same, so a second synthesis of the app, bundling included, would only
 * repeat them (~20 CPU-seconds and as many seconds of the rehearsal's wall time).
 */
const FUNCTION = 'CatalogFunction';
const DROPPED = 'dynamodb:PutItem';
let stack: RehearsalStack;
let lambda: LambdaClient;

/** What withoutGrant edits in a role policy's document. */
type PolicyDocument = { Statement: { Action: string | string[] }[] };

/**
 * A copy of the cloud assembly in `from` whose IAM policies under `functionId` (the logical id of
 * the function's role policy starts with it) no longer grant `action`; a statement left without
 * actions grants a placeholder that matches nothing. The asset directories are linked, not copied.
 */
function withoutGrant(from: string, to: string, functionId: string, action: string): void {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  let dropped = 0;
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) symlinkSync(source, target, 'dir');
    else if (!entry.name.endsWith('.template.json')) cpSync(source, target);
    else {
      const template = JSON.parse(readFileSync(source, 'utf8')) as Template;
      for (const [id, resource] of Object.entries(template.Resources)) {
        if (resource.Type !== 'AWS::IAM::Policy' || !id.startsWith(functionId)) continue;
        const document = resource.Properties?.PolicyDocument as PolicyDocument | undefined;
        for (const statement of document?.Statement ?? []) {
          const actions = [statement.Action].flat();
          if (!actions.includes(action)) continue;
          dropped++;
          const rest = actions.filter((a) => a !== action);
          statement.Action = rest.length ? rest : ['none:Null'];
        }
      }
      writeFileSync(target, JSON.stringify(template));
    }
  }
  if (dropped === 0) throw new Error(`no policy of ${functionId} in ${from} grants ${action}`);
}

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
  withoutGrant(inject('assemblyDir'), outDir, FUNCTION, DROPPED);
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

describe('rehearsal: a grant missing from the app', () => {
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
        function: expect.stringContaining(FUNCTION),
        action: DROPPED,
        resource: table.arn,
        result: 'ImplicitlyDenied',
      }),
    );
    const after = await fetch(`${api}/products`, { headers });
    expect(((await after.json()) as { data: unknown[] }).data).toEqual([]);
  });
});
