import { afterEach, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { createHttpHandler, type RouteFn } from '#http/http-handler.ts';
import { DomainError } from '#domain/errors.ts';
import { busy, outOfTime } from '#app/contention.ts';
import { problemResult } from '#http/error-status.ts';
import { log, setLogSink } from '#shared/log.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';

/** The middy chain on its own, with a synthetic API Gateway event: pure request → response logic. */
function event(
  over: Partial<Omit<APIGatewayProxyEvent, 'requestContext'>> & {
    limited?: boolean;
    contended?: boolean;
    abilities?: string;
  } = {},
): APIGatewayProxyEvent {
  const { limited, contended, abilities, ...rest } = over;
  return gatewayEvent(
    { headers: { Host: 'h' }, ...rest },
    {
      authorizer: {
        keyId: '1',
        storeId: 's',
        abilities: abilities ?? 'catalog:read',
        currency: 'EUR',
        rateLimit: '60',
        rateRemaining: '10',
        rateReset: '7',
        rateLimited: limited ? '1' : '0',
        rateContended: contended ? '1' : '0',
      },
    },
  );
}
const ctx = {} as Context;

/** A products Lambda whose operations both run `route`. */
const productsHandler = (route: RouteFn) => createHttpHandler('products', { listProducts: route, getProduct: route });

describe('the shared HTTP chain', () => {
  afterEach(() => setLogSink((l) => process.stdout.write(l + '\n')));

  it('puts the request id on every line logged while handling the request, and on no line after it', async () => {
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    const handler = productsHandler(async () => {
      await new Promise((r) => setTimeout(r, 1)); // across an await, as a route's DynamoDB calls are
      log('warn', 'deep inside a route');
      return { body: {} };
    });
    expect((await handler(event(), ctx)).statusCode).toBe(200);
    log('warn', 'between requests');
    const parsed = lines.map((l) => JSON.parse(l) as { msg: string; request_id: string | null });
    // Whether the chain's own 'request' line shows depends on the level other files set; every
    // line it does write while handling the request carries the id, and the one after it none.
    const during = parsed.slice(0, -1);
    expect(during.map((l) => l.msg)).toContain('deep inside a route');
    expect(during.map((l) => l.request_id)).toEqual(during.map(() => 'req-1'));
    expect(parsed.at(-1)).toMatchObject({ msg: 'between requests', request_id: null });
  });

  it('turns an unexpected error into 500 internal_error with the request id and no stack, and logs the cause', async () => {
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    const handler = productsHandler(async () => {
      throw new TypeError('secret detail at line 42');
    });
    const res = await handler(event(), ctx);
    expect(res.statusCode).toBe(500);
    const body = JSON.parse(res.body);
    expect(body).toEqual({ code: 'internal_error', message: expect.stringContaining('req-1'), field: null });
    expect(res.body).not.toContain('secret detail');
    expect(res.headers?.['RateLimit-Remaining']).toBe('10');
    expect(lines.some((l) => l.includes('secret detail') && l.includes('"request_id":"req-1"'))).toBe(true);
  });

  it('answers 429 with Retry-After before running the operation', async () => {
    let ran = false;
    const handler = productsHandler(async () => ((ran = true), { body: {} }));
    const res = await handler(event({ limited: true }), ctx);
    expect(res.statusCode).toBe(429);
    expect(res.headers?.['Retry-After']).toBe('7');
    expect(JSON.parse(res.body).code).toBe('rate_limited');
    expect(ran).toBe(false);
  });

  it("says so when a 429 comes from the key's own requests colliding on its count, not a spent allowance", async () => {
    const handler = productsHandler(async () => ({ body: {} }));
    const spent = JSON.parse((await handler(event({ limited: true }), ctx)).body);
    expect(spent.message).toBe('This key exceeded its allowance of 60 requests per minute.');
    const res = await handler(event({ limited: true, contended: true }), ctx);
    expect(res.statusCode).toBe(429);
    expect(res.headers?.['Retry-After']).toBe('7');
    const body = JSON.parse(res.body);
    expect(body.code).toBe('rate_limited');
    expect(body.message).toContain('at the same moment');
    expect(body.message).toContain('allowance of 60 requests per minute is not spent');
    expect(body.message).not.toContain('exceeded');
  });

  it('answers a write that kept losing to writers of its record 429 resource_busy with Retry-After, the RateLimit headers still the allowance', async () => {
    const lines: string[] = [];
    setLogSink((l) => lines.push(l));
    const handler = productsHandler(async () => problemResult(busy('product 7 of store s')));
    const res = await handler(event(), ctx);
    expect(res.statusCode).toBe(429);
    // Counted as Busy, not as Throttled (the key's allowance) nor as a 5xx.
    const metrics = lines.map((l) => JSON.parse(l)).find((l) => 'Busy' in l);
    expect(metrics).toMatchObject({ Busy: 1, Throttled: 0, ServerErrors: 0 });
    expect(res.headers?.['Retry-After']).toBe('1');
    // Not a rate-limit refusal: the allowance is what the authorizer counted, not spent.
    expect(res.headers).toMatchObject({ 'RateLimit-Limit': '60', 'RateLimit-Remaining': '10', 'RateLimit-Reset': '7' });
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ code: 'resource_busy', field: null });
    expect(body.message).toContain('nothing was written');
  });

  it("answers a write its request's time ran out for, having lost no round, 503 service_unavailable with Retry-After", async () => {
    const handler = productsHandler(async () => {
      throw outOfTime('product 7 of store s');
    });
    const res = await handler(event(), ctx);
    expect(res.statusCode).toBe(503);
    expect(res.headers?.['Retry-After']).toBe('1');
    expect(JSON.parse(res.body)).toMatchObject({ code: 'service_unavailable', field: null });
  });

  it('refuses a key without the ability even if the authorizer let it through', async () => {
    const handler = productsHandler(async () => ({ body: {} }));
    const res = await handler(event({ abilities: 'orders:read' }), ctx);
    expect(res.statusCode).toBe(403);
    expect(JSON.parse(res.body).message).toContain('catalog:read');
  });

  it('answers 401 when no authorizer context reached the handler', async () => {
    const handler = productsHandler(async () => ({ body: {} }));
    const e = event();
    (e.requestContext as { authorizer: unknown }).authorizer = null;
    expect((await handler(e, ctx)).statusCode).toBe(401);
  });

  it('passes DomainErrors through in the contract shape', async () => {
    const handler = productsHandler(async () => {
      throw new DomainError('validation_failed', 'limit: too big', 'limit');
    });
    const res = await handler(event(), ctx);
    expect(res.statusCode).toBe(422);
    expect(JSON.parse(res.body)).toEqual({ code: 'validation_failed', message: 'limit: too big', field: 'limit' });
    expect(res.headers?.['Content-Type']).toBe('application/json');
  });
});
