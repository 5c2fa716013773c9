import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { lambdaInvoker } from '#bin/admin-invoke.ts';
import { client, createKey, createStore } from '#fixtures/api.ts';
import { consoleBrowserFlows } from '#fixtures/console-flows.ts';

/**
 * The console's deployed path: `npm run admin -- console --function NAME` invokes the admin
 * Lambda through the Lambda API with the operator's credentials. Here the Lambda API is the
 * rehearsal's, the function its bundle with its template role (IAM enforced), and the request
 * list comes from the stage's access log group through Logs Insights (emulation/rehearsal/logs.ts).
 */
Object.assign(process.env, {
  AWS_ENDPOINT_URL_LAMBDA: inject('rehearsalUrl'),
  AWS_ACCESS_KEY_ID: 'operator',
  AWS_SECRET_ACCESS_KEY: 'rehearsal',
  AWS_REGION: process.env.AWS_REGION || 'us-east-1',
});
const adminFunction = inject('adminFunctionName');
const invoke = lambdaInvoker(adminFunction);

describe('keys requests through the admin Lambda (access log group, Logs Insights)', () => {
  it("lists a key's requests newest first with their status, and no other key's", async () => {
    expect(adminFunction).not.toBe('');
    const store = await createStore();
    const key = await createKey(store, ['catalog:read']);
    const other = await createKey(store, ['catalog:read']);
    expect((await client(key.token).get('/products')).status).toBe(200);
    expect((await client(key.token).get('/orders')).status).toBe(403);
    expect((await client(other.token).get('/products')).status).toBe(200);
    const out = await invoke({ command: 'keys requests', args: { id: key.id } });
    if (!out.ok) throw new Error(JSON.stringify(out.error));
    const data = out.data as {
      data: { method: string; path: string; status: number; request_id: string; time: string }[];
      source: string;
    };
    expect(data.source).toMatch(/^access log group /);
    expect(data.data.map((r) => [r.method, r.path.replace(/^.*integrations/, ''), r.status])).toEqual([
      ['GET', '/orders', 403],
      ['GET', '/products', 200],
    ]);
    expect(data.data[0]!.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const refused = await invoke({ command: 'keys requests', args: { id: key.id, limit: 0 } });
    expect(refused.ok ? undefined : refused.error).toMatchObject({ code: 'validation_failed', field: 'limit' });
    const unknown = await invoke({ command: 'keys requests', args: { id: 99_999_999 } });
    expect(unknown.ok ? undefined : unknown.error).toMatchObject({ code: 'not_found', field: 'id' });
  });
});

consoleBrowserFlows('admin console --function NAME against the rehearsal', {
  invoke: () => invoke,
  shots: mkdtempSync(path.join(tmpdir(), 'console-rehearsal-shots-')),
});
