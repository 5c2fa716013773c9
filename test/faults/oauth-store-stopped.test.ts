import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDynamoDbLocal, type DynamoDbLocal } from '#emulation/local/dynamodb-local.ts';
import { startLocalStack, type LocalStack } from '#emulation/local/stack.ts';
import { freePort } from '#fixtures/free-port.ts';
import { waitFor } from '#fixtures/webhooks.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

/**
 * The OAuth endpoints while the store is stopped (SIGSTOP): every answer is an RFC 6749 error
 * body, 503 `temporarily_unavailable` with Retry-After, never the gateway's 502 for a function
 * that threw (docs/oauth.md#failures). This file runs its own DynamoDB Local and gateway: the
 * shared test store is never stopped.
 */
const CALL_BUDGET_MS = 3000;

describe('OAuth endpoints with the store stopped', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'oauth-stopped-'));
  let store: DynamoDbLocal | undefined;
  let stack: LocalStack | undefined;
  afterAll(async () => {
    store?.process.kill('SIGCONT');
    await stack?.stop();
    await store?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a token request and a registration 503 temporarily_unavailable as JSON, and recovers', {
    timeout: 300_000,
  }, async () => {
    const dynamodbPort = await freePort();
    store = startDynamoDbLocal({ port: dynamodbPort, dataDir, log: () => {} });
    const endpoint = store.endpoint;
    await waitFor(
      'DynamoDB Local listening',
      () =>
        fetch(endpoint).then(
          () => true,
          () => false,
        ),
      180_000,
      250,
    );
    stack = await startLocalStack({
      port: 0,
      dynamodbPort,
      dataDir: null,
      endpoint,
      tableName: 'oauth-stopped-test',
      env: { DYNAMODB_CALL_TIMEOUT_MS: String(CALL_BUDGET_MS) },
    });
    const root = stack.baseUrl.slice(0, -API_BASE_PATH.length);
    const register = () =>
      fetch(`${root}/oauth/register`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ client_name: 'Stopped', redirect_uris: ['http://127.0.0.1:9/callback'] }),
      });
    // A code of the right shape: the endpoint has to ask the store about it.
    const token = () =>
      fetch(`${root}/oauth/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: `sic_${'A'.repeat(43)}`,
          code_verifier: 'v'.repeat(43),
          redirect_uri: 'http://127.0.0.1:9/callback',
          client_id: 'oc_00000000000000000000000000000000',
        }),
      });
    // A cold store on a loaded machine may miss the budget at first: retried, it is not under test.
    await waitFor('a registration on the new store', async () => (await register()).status === 201, 120_000, 500);

    store.process.kill('SIGSTOP');
    for (const res of [await token(), await register()]) {
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const body = (await res.json()) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
      expect(body.error).toBe('temporarily_unavailable');
      expect(typeof body.error_description).toBe('string');
    }
    store.process.kill('SIGCONT');

    // Back without a restart: the unknown code is an ordinary refusal again.
    await waitFor('the token endpoint answering again', async () => (await token()).status === 400, 120_000, 250);
  });
});
