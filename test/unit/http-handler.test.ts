import { afterEach, describe, expect, it } from 'vitest';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { createHttpHandler, type RouteFn } from '#http/http-handler.ts';
import { DomainError } from '#domain/errors.ts';
import { busy, outOfTime } from '#app/contention.ts';
import { problemResult } from '#http/error-status.ts';
import { log, setLogSink } from '#shared/log.ts';
import { gatewayEvent } from '#fixtures/gateway-event.ts';
import { API_BASE_PATH } from '#http/api-routes.ts';

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

describe("the shared HTTP chain's own refusals, whole", () => {
  /** Every operation of every group runs this: the refusals pinned here come before any of them. */
  const handler = createHttpHandler(
    'catalog',
    new Proxy({}, { get: () => async () => ({ body: { ran: true } }) }) as Parameters<typeof createHttpHandler>[1],
  );
  const answer = async (e: APIGatewayProxyEvent) => {
    const res = await handler(e, ctx);
    return { status: res.statusCode, headers: res.headers, body: JSON.parse(res.body) };
  };
  const put = (body: string | null, isBase64Encoded = false) =>
    event({
      httpMethod: 'PUT',
      resource: `${API_BASE_PATH}/catalog/products/{external_id}`,
      path: `${API_BASE_PATH}/catalog/products/x`,
      pathParameters: { external_id: 'x' },
      body,
      isBase64Encoded,
      abilities: 'catalog:write',
    });

  it('answers an unknown resource 404 and a method the resource lacks 405 with Allow', async () => {
    expect(await answer(event({ resource: `${API_BASE_PATH}/nowhere` }))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "not_found",
          "field": null,
          "message": "No such endpoint.",
        },
        "headers": {
          "Content-Type": "application/json",
          "X-Request-Id": "req-1",
        },
        "status": 404,
      }
    `);
    expect(await answer(event({ httpMethod: 'DELETE' }))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "method_not_allowed",
          "field": null,
          "message": "DELETE is not allowed here; allowed: GET, HEAD.",
        },
        "headers": {
          "Allow": "GET, HEAD",
          "Content-Type": "application/json",
          "X-Request-Id": "req-1",
        },
        "status": 405,
      }
    `);
  });

  it('answers no authorizer context 401 with the challenge, a spent allowance 429 and a missing ability 403', async () => {
    const e = event();
    (e.requestContext as { authorizer: unknown }).authorizer = null;
    expect(await answer(e)).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "unauthenticated",
          "field": null,
          "message": "A valid API key or OAuth access token is required (Authorization: Bearer <key or token>).",
        },
        "headers": {
          "Content-Type": "application/json",
          "WWW-Authenticate": "Bearer resource_metadata="https://localhost/.well-known/oauth-protected-resource/api/v1/integrations"",
          "X-Request-Id": "req-1",
        },
        "status": 401,
      }
    `);
    expect(await answer(event({ limited: true }))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "rate_limited",
          "field": null,
          "message": "This key exceeded its allowance of 60 requests per minute.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "Retry-After": "7",
          "X-Request-Id": "req-1",
        },
        "status": 429,
      }
    `);
    expect(await answer(event({ abilities: 'orders:read' }))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "forbidden",
          "field": null,
          "message": "This key lacks the ability catalog:read.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 403,
      }
    `);
    expect(
      await answer(event({ resource: `${API_BASE_PATH}/events`, path: `${API_BASE_PATH}/events`, abilities: '' })),
    ).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "forbidden",
          "field": null,
          "message": "This key holds none of the abilities orders:read, catalog:read, content:read.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 403,
      }
    `);
  });

  it('answers a body it cannot read: too large 413, not UTF-8, empty, too deep, not JSON, not an object 400', async () => {
    const big = 'x'.repeat(1024 * 1024 + 1);
    expect(await answer(put(big))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "payload_too_large",
          "field": null,
          "message": "The request body is larger than 1048576 bytes.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 413,
      }
    `);
    expect(await answer(put(Buffer.from(big).toString('base64'), true))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "payload_too_large",
          "field": null,
          "message": "The request body is larger than 1048576 bytes.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 413,
      }
    `);
    expect(await answer(put(Buffer.from([0x7b, 0xff, 0x7d]).toString('base64'), true))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "invalid_json",
          "field": null,
          "message": "The request body is not valid UTF-8.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 400,
      }
    `);
    expect(await answer(put(''))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "invalid_json",
          "field": null,
          "message": "The request body must be a JSON object.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 400,
      }
    `);
    expect(await answer(put(`${'['.repeat(40)}${']'.repeat(40)}`))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "invalid_json",
          "field": null,
          "message": "The request body nests deeper than 32 levels.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 400,
      }
    `);
    expect(await answer(put('{"a":'))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "invalid_json",
          "field": null,
          "message": "The request body is not valid JSON.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 400,
      }
    `);
    expect(await answer(put('[1]'))).toMatchInlineSnapshot(`
      {
        "body": {
          "code": "invalid_json",
          "field": null,
          "message": "The request body must be a JSON object.",
        },
        "headers": {
          "Content-Type": "application/json",
          "RateLimit-Limit": "60",
          "RateLimit-Remaining": "10",
          "RateLimit-Reset": "7",
          "X-Request-Id": "req-1",
        },
        "status": 400,
      }
    `);
    // What passes every check reaches the operation.
    expect(await answer(put('{"name":"Oak"}'))).toMatchObject({ status: 200, body: { ran: true } });
  });
});
