import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateClientId, generateRefreshToken } from '#domain/oauth/oauth.ts';
import { startRehearsal, type RehearsalStack } from '#emulation/rehearsal/stack.ts';
import { freePort } from '#fixtures/free-port.ts';
import { waitFor } from '#fixtures/webhooks.ts';

/**
 * The token endpoint as deployed while its store is stopped (SIGSTOP): API Gateway's REST API
 * from the template, the OAuth function's bundle in its sandbox with its role, its call budget as
 * deployed (shared/config.ts). The answer is the function's RFC 6749 error, 503
 * `temporarily_unavailable` with Retry-After, well before the function's timeout, never the
 * gateway's answer for a function that threw or timed out (docs/oauth.md#failures): the template's
 * INTEGRATION_FAILURE, 502 `bad_gateway` (shared/http/gateway-responses.ts).
 * Its own stack on its own DynamoDB Local, so no other file's store is ever stopped; the local
 * stack's counterpart is test/faults/oauth-store-stopped.test.ts.
 */
const OAUTH = /^OAuthFunction/;
let stack: RehearsalStack;

const invocations = () => [...stack.invocations].filter(([id]) => OAUTH.test(id)).reduce((n, [, c]) => n + c, 0);

/** A refresh as a client sends it, with a token of the right shape: the endpoint has to ask the store about it. */
const refresh = () =>
  fetch(`${stack.url}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: generateRefreshToken(),
      client_id: generateClientId(),
    }),
  });

/** The status of an answer the test only waits on (its body read, so its connection is free again). */
async function statusOf(res: Response): Promise<number> {
  await res.arrayBuffer();
  return res.status;
}

/** An RFC 6749 §5.2 error body: exactly `error` and `error_description`, as JSON, never cached. */
async function oauthError(res: Response): Promise<string> {
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['error', 'error_description']);
  expect(typeof body.error_description).toBe('string');
  return body.error as string;
}

beforeAll(async () => {
  stack = await startRehearsal({
    assemblyDir: inject('assemblyDir'),
    port: 0,
    dynamodbPort: await freePort(),
    dataDir: null,
    envOverrides: { LOG_LEVEL: 'error' },
  });
});

afterAll(async () => {
  stack?.dynamodbProcess.kill('SIGCONT');
  await stack?.stop();
});

describe('rehearsal: the token endpoint with its store stopped', () => {
  it('answers 503 temporarily_unavailable as an RFC 6749 error from the function, and recovers', async () => {
    // A cold store on a loaded machine may miss the call budget at first: retried, it is not under test.
    await waitFor(
      'the token endpoint on the new store',
      async () => (await statusOf(await refresh())) === 400,
      120_000,
      500,
    );

    stack.dynamodbProcess.kill('SIGSTOP');
    const before = invocations();
    const stopped = await refresh();
    expect(stopped.status).toBe(503);
    expect(Number(stopped.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await oauthError(stopped)).toBe('temporarily_unavailable');
    // It went through the gateway to the OAuth function, once (API Gateway does not retry an invocation).
    expect(invocations() - before).toBe(1);
    stack.dynamodbProcess.kill('SIGCONT');

    // Back without a restart: the made-up refresh token is an ordinary refusal again.
    const recovered = await waitFor(
      'the token endpoint answering again',
      async () => {
        const res = await refresh();
        if (res.status === 400) return res;
        await statusOf(res);
        return undefined;
      },
      120_000,
      250,
    );
    expect(await oauthError(recovered)).toBe('invalid_grant');
  });
});
