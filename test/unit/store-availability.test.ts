import { createServer, type Server, type Socket, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DomainError } from '#domain/errors.ts';
import { withDeadline } from '#domain/time.ts';
import { newContext } from '#shared/context.ts';
import { CONNECT_TIMEOUT_MS, sendWithin, storeUnavailable } from '#db/core/client.ts';

const sdkError = (name: string, extra: Record<string, unknown> = {}) =>
  Object.assign(new Error(name), { name, ...extra });

describe('store failures become 503 service_unavailable', () => {
  it('maps throttling, store faults, 5xx and network failures, with Retry-After', () => {
    for (const err of [
      sdkError('ProvisionedThroughputExceededException'),
      sdkError('ThrottlingException'),
      sdkError('RequestLimitExceeded'),
      sdkError('InternalServerError'),
      sdkError('UnknownError', { $metadata: { httpStatusCode: 502 } }),
      sdkError('Error', { code: 'ECONNREFUSED' }),
      sdkError('Error', { code: 'ECONNRESET' }),
      sdkError('TimeoutError'),
      sdkError('AbortError'),
      sdkError('TransactionCanceledException', {
        CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }],
      }),
    ]) {
      const mapped = storeUnavailable(err);
      expect(mapped, err.name).toBeInstanceOf(DomainError);
      expect(mapped?.code).toBe('service_unavailable');
      expect(mapped?.field).toBeNull();
      expect(mapped?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(mapped?.message).toMatch(/data store is unavailable/);
    }
  });

  it('leaves the answers of a healthy store alone', () => {
    expect(
      storeUnavailable(sdkError('ConditionalCheckFailedException', { $metadata: { httpStatusCode: 400 } })),
    ).toBeUndefined();
    expect(storeUnavailable(sdkError('ValidationException', { $metadata: { httpStatusCode: 400 } }))).toBeUndefined();
    expect(
      storeUnavailable(
        sdkError('TransactionCanceledException', {
          CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'ThrottlingError' }],
        }),
      ),
    ).toBeUndefined();
    expect(storeUnavailable(new DomainError('conflict', 'x'))).toBeUndefined();
    expect(storeUnavailable(new TypeError('a bug'))).toBeUndefined();
  });
});

describe('a DynamoDB call against a store that does not answer', () => {
  // Accepts connections and never answers: what a SIGSTOPped store looks like from outside.
  let silent: Server;
  const sockets: Socket[] = [];
  const ended = new Set<Socket>();
  beforeAll(async () => {
    silent = createServer((s) =>
      sockets.push(
        s
          .resume()
          .on('error', () => undefined)
          .on('end', () => ended.add(s))
          .on('close', () => ended.add(s)),
      ),
    );
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  /** A client built as the product's is, and a call on it within `budgetMs` (shared/db/core/client.ts `sendWithin`). */
  const clientFor = (endpoint: string, budgetMs: number) => {
    const client = new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 4,
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS },
    });
    const send = (command: GetItemCommand, ctx = newContext()) => sendWithin(client, budgetMs, ctx, command);
    return { send, destroy: () => client.destroy() };
  };
  const get = new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' }, sk: { S: 'b' } } });
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (err: unknown) => err,
    );

  it('ends with service_unavailable once its budget is spent, retries included, and closes the socket', async () => {
    const client = clientFor(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`, 300);
    // A cold client loads its HTTP handler on first use; on a busy machine that alone can outlast
    // the budget before any connection is opened. Each try must fail the same way; the socket
    // check needs one try that got as far as connecting (counted, not timed).
    for (let tries = 0; tries < 10 && sockets.length === 0; tries++) {
      const err = await failure(client.send(get));
      expect(err).toBeInstanceOf(DomainError);
      expect((err as DomainError).code).toBe('service_unavailable');
      expect((err as DomainError).retryAfterSeconds).toBe(2);
    }
    // The abandoned attempt's connection is closed from our side, not left to the store.
    for (let i = 0; i < 600 && sockets.some((s) => !ended.has(s)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(sockets.length).toBeGreaterThan(0);
    expect(sockets.filter((s) => !ended.has(s))).toEqual([]);
    client.destroy();
  }, 60_000);

  it('ends when the request deadline ends, before its own budget', async () => {
    const client = clientFor(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`, 60_000);
    const err = await failure(client.send(get, withDeadline(newContext(), 200)));
    expect((err as DomainError).code).toBe('service_unavailable');
    client.destroy();
  });

  it('answers service_unavailable for a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const client = clientFor(`http://127.0.0.1:${port}`, 60_000);
    const err = await failure(client.send(get));
    expect((err as DomainError).code).toBe('service_unavailable');
    expect((err as DomainError).message).toMatch(/connect/);
    client.destroy();
  });
});
