import path from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_BASE_PATH } from '#http/api-routes.ts';
import { generateToken } from '#domain/key/api-key.ts';
import { startRehearsal, type RehearsalStack } from '#emulation/rehearsal/stack.ts';
import { freePort } from '#fixtures/free-port.ts';

/**
 * A request whose token is no key never runs a group Lambda (docs/gateway.md): the rehearsal of
 * the synthesized app (the assembly the global set-up synthesized) counts every invocation. A
 * malformed header is refused by the web ACL, before the authorizer; an unknown, revoked or
 * rotated-away token by the authorizer's Deny, answered by the ACCESS_DENIED gateway response.
 */
let stack: RehearsalStack;
let lambda: LambdaClient;

const count = (pattern: RegExp) =>
  [...stack.invocations].filter(([id]) => pattern.test(id)).reduce((n, [, c]) => n + c, 0);
const AUTHORIZER = /^AuthorizerFunction/;
/** Every function API Gateway may invoke behind the authorizer. */
const GROUPS = /^(Products|Catalog|Orders|Content|Mcp)Function/;

async function admin<T>(command: string, args: Record<string, unknown>): Promise<T> {
  const fn = stack.functions.find((f) => /AdminFunction/.test(f.logicalId))!;
  const out = await lambda.send(
    new InvokeCommand({ FunctionName: fn.name, Payload: Buffer.from(JSON.stringify({ command, args })) }),
  );
  const body = JSON.parse(Buffer.from(out.Payload!).toString('utf8')) as { ok: boolean; data: T };
  expect(body.ok, JSON.stringify(body)).toBe(true);
  return body.data;
}

beforeAll(async () => {
  const assemblyDir = process.env.REHEARSAL_CDK_OUT
    ? path.resolve(process.env.REHEARSAL_CDK_OUT)
    : path.resolve('.rehearsal/app.out');
  stack = await startRehearsal({
    assemblyDir,
    port: 0,
    dynamodbPort: await freePort(),
    dataDir: null,
    // DynamoDB Local on a loaded machine answers slower than AWS's 2.5 s call budget: the local stack's 25 s.
    envOverrides: { LOG_LEVEL: 'error', DYNAMODB_CALL_TIMEOUT_MS: '25000' },
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

describe('rehearsal: a token that is no key', () => {
  it('is answered 401 by API Gateway without invoking any group Lambda', async () => {
    const storeId = `s-${Date.now()}`;
    await admin('stores create', { id: storeId, name: 'Rehearsal', currency: 'EUR' });
    const key = await admin<{ id: number; token: string }>('keys create', {
      store: storeId,
      name: 'k',
      abilities: 'catalog:read',
    });
    const revoked = await admin<{ id: number; token: string }>('keys create', {
      store: storeId,
      name: 'r',
      abilities: 'catalog:read',
    });
    await admin('keys revoke', { id: revoked.id });
    const get = (authorization?: string) =>
      fetch(`${stack.url}${API_BASE_PATH}/products`, { headers: authorization ? { authorization } : {} });

    // The counter counts: a valid key runs the authorizer and the products Lambda once each.
    const [authBefore, groupsBefore] = [count(AUTHORIZER), count(GROUPS)];
    expect((await get(`Bearer ${key.token}`)).status).toBe(200);
    expect([count(AUTHORIZER) - authBefore, count(GROUPS) - groupsBefore]).toEqual([1, 1]);

    // What the deployed stage names: its own execute-api URL, which the rehearsal resolves from the
    // template's Fn::Join with the RestApi id (its own naming) and region it gave the API, not its address.
    const metadataUrl = `https://[^./"]+\\.execute-api\\.[a-z0-9-]+\\.amazonaws\\.com/prod/\\.well-known/oauth-protected-resource${API_BASE_PATH}`;
    const bare = new RegExp(`^Bearer resource_metadata="${metadataUrl}"$`);
    const invalid = new RegExp(`^Bearer resource_metadata="${metadataUrl}", error="invalid_token"$`);
    const cases = [
      { name: 'no header', header: undefined, challenge: bare, authorizerRuns: 0 },
      { name: 'malformed', header: 'Bearer not-a-token', challenge: invalid, authorizerRuns: 0 },
      { name: 'unknown', header: `Bearer ${generateToken()}`, challenge: invalid, authorizerRuns: 1 },
      { name: 'revoked', header: `Bearer ${revoked.token}`, challenge: invalid, authorizerRuns: 1 },
    ];
    for (const c of cases) {
      const [auth, groups] = [count(AUTHORIZER), count(GROUPS)];
      const res = await get(c.header);
      expect(res.status, c.name).toBe(401);
      expect(res.headers.get('www-authenticate'), c.name).toMatch(c.challenge);
      expect(await res.json(), c.name).toEqual({ code: 'unauthenticated', message: expect.any(String), field: null });
      expect(count(GROUPS) - groups, `${c.name}: group Lambda invocations`).toBe(0);
      expect(count(AUTHORIZER) - auth, `${c.name}: authorizer invocations`).toBe(c.authorizerRuns);
    }
  });
});
