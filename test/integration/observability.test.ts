import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent, Context } from 'aws-lambda';
import { handler as authorizer } from '#functions/authorizer/handler.ts';
import { handler as orders } from '#functions/orders/handler.ts';
import { resetConfig } from '#shared/config.ts';
import { resourceOf } from '#http/api-routes.ts';
import { createKey, createStore } from '#fixtures/api.ts';
import { idemKey, placeOrder } from '#fixtures/orders.ts';

/**
 * Logs and metrics as the Lambdas print them: the authorizer and the orders Lambda are invoked
 * in this process the way API Gateway invokes them (a real token, real DynamoDB), and their
 * stdout is read back: JSON log lines with the invocation's fields, EMF metric lines.
 */
const STATUS_RESOURCE = resourceOf({ path: '/orders/{reference}/status' });

function lambdaContext(requestId: string): Context {
  return {
    functionName: 'orders-fn',
    awsRequestId: requestId,
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:orders-fn',
  } as Context;
}

let lines: string[] = [];
const captureStdout = () => {
  lines = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
};
const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, any>);
const emf = () => parsed().filter((l) => l._aws?.CloudWatchMetrics);

/** Authorizer, then the orders Lambda with what it decided: one API request, as API Gateway runs it. */
async function statusChange(token: string, reference: string, idempotencyKey: string) {
  const requestId = randomUUID();
  const headers = {
    Authorization: `Bearer ${token}`,
    'Idempotency-Key': idempotencyKey,
    'Content-Type': 'application/json',
  };
  const path = `/orders/${reference}/status`;
  const authorizerEvent = {
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:us-east-1:000000000000:api/prod/POST${path}`,
    resource: STATUS_RESOURCE,
    path,
    httpMethod: 'POST',
    headers,
    requestContext: { requestId },
  } as unknown as APIGatewayRequestAuthorizerEvent;
  const decision = await authorizer(authorizerEvent, lambdaContext(randomUUID()));
  const event = {
    resource: STATUS_RESOURCE,
    path,
    httpMethod: 'POST',
    headers,
    pathParameters: { reference },
    queryStringParameters: null,
    body: JSON.stringify({ status: 'processing' }),
    isBase64Encoded: false,
    requestContext: { requestId, path, domainName: 'api.example.com', authorizer: decision.context },
  } as unknown as APIGatewayProxyEvent;
  return { requestId, response: await orders(event, lambdaContext(requestId)) };
}

describe('observability: log lines and EMF metrics of a request', () => {
  let storeId: string;
  beforeAll(async () => {
    process.env.LOG_LEVEL = 'info';
    process.env.POWERTOOLS_METRICS_NAMESPACE = 'ObservabilityTest';
    resetConfig();
    storeId = await createStore();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  afterAll(() => {
    process.env.LOG_LEVEL = 'warn';
    resetConfig();
  });

  it('puts request id, cold start, key and store on every line, and never the token', async () => {
    const key = await createKey(storeId, ['orders:read', 'orders:write-status']);
    const placed = await placeOrder(storeId);
    captureStdout();
    const { requestId, response } = await statusChange(key.token, placed.reference, idemKey());
    vi.restoreAllMocks();
    expect(response.statusCode).toBe(200);
    const logs = parsed();
    // One line for a 2xx: the handler's, its metrics embedded; the authorizer's line is at debug.
    expect(logs.map((l) => l.msg)).toEqual(['request']);
    expect(Buffer.byteLength(lines.join('\n'))).toBeLessThanOrEqual(900);
    for (const line of logs) {
      expect(line).toMatchObject({
        level: 'info',
        key_id: key.id,
        store_id: storeId,
        service: 'store-integration-api',
      });
      expect(typeof line.cold_start).toBe('boolean');
      expect(line.time).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
    expect(logs[0]).toMatchObject({
      request_id: requestId,
      function_name: 'orders-fn',
      status: 200,
      operation: 'setOrderStatus',
      Requests: 1,
    });
    expect(logs[0]).not.toHaveProperty('ddb_ops');
    const all = lines.join('\n');
    expect(all).not.toContain(key.token);
    expect(all).not.toContain(key.token.slice(-20));
    expect(all).not.toContain(key.webhook_secret.slice('whsec_'.length));
  });

  it('emits EMF metrics per request: by operation, with 403s, 429s, 5xx and idempotency replays', async () => {
    const writer = await createKey(storeId, ['orders:read', 'orders:write-status']);
    const reader = await createKey(storeId, ['orders:read']);
    const placed = await placeOrder(storeId);
    const k = idemKey();
    captureStdout();
    await statusChange(writer.token, placed.reference, k);
    const replay = await statusChange(writer.token, placed.reference, k);
    const forbidden = await statusChange(reader.token, placed.reference, idemKey());
    vi.restoreAllMocks();
    expect([replay.response.statusCode, forbidden.response.statusCode]).toEqual([200, 403]);

    const metrics = emf();
    const ofOperation = metrics.filter((m) => m.operation === 'setOrderStatus');
    expect(ofOperation).toHaveLength(3);
    for (const m of metrics) {
      const [directive] = m._aws.CloudWatchMetrics;
      expect(directive.Namespace).toBe('ObservabilityTest');
      expect(directive.Dimensions).toEqual([['service', 'operation']]);
    }
    expect(
      ofOperation.map((m) => [m.Requests, m.IdempotencyReplays, m.Forbidden, m.Throttled, m.ServerErrors]),
    ).toEqual([
      [1, 0, 0, 0, 0],
      [1, 1, 0, 0, 0],
      [1, 0, 1, 0, 0],
    ]);
    expect(ofOperation.every((m) => typeof m.Latency === 'number')).toBe(true);
    // The authorizer's metrics are its refusals only: every request it lets through is the handler's.
    expect(metrics.filter((m) => m.operation === 'authorizer')).toEqual([]);
  });

  it("counts a request without a key once, as the authorizer's Unauthorized, and prints the detail only at debug", async () => {
    captureStdout();
    const noKey = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:us-east-1:000000000000:api/prod/GET/orders',
      resource: '/v1/orders',
      path: '/orders',
      httpMethod: 'GET',
      headers: {},
      requestContext: { requestId: randomUUID() },
    };
    await expect(
      authorizer(noKey as unknown as APIGatewayRequestAuthorizerEvent, lambdaContext(randomUUID())),
    ).rejects.toThrow('Unauthorized');
    vi.restoreAllMocks();
    expect(emf().map((m) => [m.operation, m.Unauthorized, m.Requests])).toEqual([['authorizer', 1, 1]]);

    process.env.LOG_LEVEL = 'debug';
    resetConfig();
    try {
      const key = await createKey(storeId, ['orders:read', 'orders:write-status']);
      const placed = await placeOrder(storeId);
      captureStdout();
      await statusChange(key.token, placed.reference, idemKey());
      vi.restoreAllMocks();
      const requestLines = parsed().filter((l) => l.msg === 'request');
      expect(requestLines.map((l) => l.level)).toEqual(['debug', 'info']);
      expect(requestLines[1]!.ddb_ops).toEqual(expect.any(String));
    } finally {
      process.env.LOG_LEVEL = 'info';
      resetConfig();
    }
  });
});
