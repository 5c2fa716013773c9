import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { DomainError } from '#domain/errors.ts';
import { isRefused, refused, type Refused } from '#domain/outcome.ts';
import { decodeUtf8, MAX_JSON_DEPTH, nestsDeeperThan } from '#domain/text.ts';
import { refusalMessage } from '#domain/key/api-key.ts';
import { errorResponse, problemOf } from './error-status.ts';
import { allowedMethods, findRoute, type ApiRoute, principalFromContext, type RequestPrincipal } from './api-routes.ts';
import type { RequestContext } from '#shared/context.ts';
import { challengeHeaders } from './challenge.ts';
import { UNAUTHORIZED_MESSAGE } from './gateway-responses.ts';

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, RequestInternal>;
type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, RequestInternal>;

export interface RequestInternal extends Record<string, unknown> {
  /** The request context instrument.ts made at the edge (`withRequestState`). */
  ctx: RequestContext;
  route?: ApiRoute;
  principal?: RequestPrincipal;
  body?: unknown;
  /** RateLimit-* on every answer to a key; the Bearer challenge on a 401. */
  responseHeaders?: Record<string, string>;
}

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The Lambda context a middy chain runs with: the invocation's own, and on it the request's
 * state, which the middlewares and the router share (`internal`), starting with its request
 * context. A context of its own per invocation, so no state outlives the request.
 */
export const withRequestState = (context: Context | undefined, ctx: RequestContext): Context =>
  // The invocation's own context as the prototype: its fields and getRemainingTimeInMillis() read through.
  ({ __proto__: context ?? null, app: { ctx } satisfies RequestInternal }) as unknown as Context;

/** Per-request state shared between the middlewares and the router (`withRequestState`). */
export const internal = (request: { context: unknown }): RequestInternal =>
  (request.context as { app: RequestInternal }).app;

/**
 * Turns every failure into the contract's `{code, message, field}` body and puts the
 * RateLimit-* headers and `X-Request-Id` on every response, success or not. Unknown errors become 500
 * `internal_error` with the request id; their cause goes to the log, never to the client.
 */
export function responseShaper(): Middleware {
  const addHeaders = (request: Request) => {
    if (!request.response) return;
    // The id the logs and a 500's message know, on every answer, so a client can quote it.
    const requestId = request.event.requestContext?.requestId;
    const headers = { ...internal(request).responseHeaders, ...(requestId ? { 'X-Request-Id': requestId } : {}) };
    request.response.headers = { ...request.response.headers, ...headers };
  };
  return {
    after: addHeaders,
    onError: (request) => {
      request.response = errorResponse(problemOf(request.error, request.event.requestContext?.requestId ?? 'unknown'));
      addHeaders(request);
    },
  };
}

/**
 * A check of the chain as a middy `before` step: the check answers its refusal, or nothing to let
 * the request on. middy reaches the error handler (responseShaper's `onError`) only by a throw: an
 * early answer from a `before` step would skip responseShaper's `after`, and with it RateLimit-*
 * and X-Request-Id. So this is the one place a refusal of the chain is thrown.
 */
const checking = (check: (request: Request) => Refused | undefined): Middleware => ({
  before: (request) => {
    const refusal = check(request);
    if (refusal) throw new DomainError(refusal.code, refusal.message, refusal.field, refusal.retryAfterSeconds);
  },
});

/** The route this event belongs to, from API Gateway's `resource` (the same table built the API); 405 with `Allow` for a method the resource lacks. */
export const resolveRoute = (): Middleware =>
  checking((request) => {
    const { httpMethod, resource } = request.event;
    const route = findRoute(httpMethod, resource);
    if (route) {
      internal(request).route = route;
      return undefined;
    }
    // API Gateway's ANY method of a known resource brings every method it does not have here.
    const allow = allowedMethods(resource);
    if (allow.length === 0) return refused('not_found', 'No such endpoint.');
    internal(request).responseHeaders = { Allow: allow.join(', ') };
    return refused('method_not_allowed', `${httpMethod} is not allowed here; allowed: ${allow.join(', ')}.`);
  });

/** Whether the request names a credential at all: the challenge then says it is not good. */
const hasAuthorization = (headers: Record<string, string | undefined> | null) =>
  Object.entries(headers ?? {}).some(([name, value]) => name.toLowerCase() === 'authorization' && !!value?.trim());

/**
 * The authorizer resolved the key; this reads what it decided. The rate-limit verdict travels in
 * the authorizer context because an authorizer cannot answer 429 itself.
 */
export const authorizedKey = (): Middleware =>
  checking((request) => {
    const authorizer = request.event.requestContext?.authorizer;
    const principal = principalFromContext(authorizer);
    const state = internal(request);
    if (!principal) {
      // Behind the authorizer only by misconfiguration: it denies every token that is no key.
      state.responseHeaders = challengeHeaders(request.event, hasAuthorization(request.event.headers));
      return refused('unauthenticated', UNAUTHORIZED_MESSAGE);
    }
    state.principal = principal;
    Object.assign(state.ctx.log, { key_id: principal.keyId, store_id: principal.storeId });
    state.responseHeaders = {
      'RateLimit-Limit': String(principal.rate.limit),
      'RateLimit-Remaining': String(principal.rate.remaining),
      'RateLimit-Reset': String(principal.rate.resetSeconds),
    };
    if (principal.rate.limited)
      return refused('rate_limited', refusalMessage(principal.rate), null, principal.rate.resetSeconds);
    // The authorizer flags a missing ability (context.missingAbility); the check is repeated here
    // from the route table so that a handler never relies on that flag alone.
    const route = state.route;
    if (route?.ability && !principal.abilities.includes(route.ability))
      return refused('forbidden', `This key lacks the ability ${route.ability}.`);
    if (route?.anyOf && !route.anyOf.some((a) => principal.abilities.includes(a)))
      return refused('forbidden', `This key holds none of the abilities ${route.anyOf.join(', ')}.`);
    return undefined;
  });

/**
 * The body's text: API Gateway hands bytes over base64-encoded (the API declares every media type
 * binary, so nothing is decoded on the way), a test or an older stage may hand text. Bytes that
 * are not UTF-8 are refused rather than stored as U+FFFD.
 */
export function bodyText(event: Pick<APIGatewayProxyEvent, 'body' | 'isBase64Encoded'>): string | Refused {
  const raw = event.body ?? '';
  if (!event.isBase64Encoded) return Buffer.byteLength(raw, 'utf8') > MAX_BODY_BYTES ? tooLarge() : raw;
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.length > MAX_BODY_BYTES) return tooLarge();
  return decodeUtf8(bytes) ?? refused('invalid_json', 'The request body is not valid UTF-8.');
}

/**
 * The query's parameters, one value each. Every parameter of the API is single-valued, and API
 * Gateway's REST proxy event keeps only the last value of a repeated one in queryStringParameters
 * (all of them in multiValueQueryStringParameters): `?dry_run=true&dry_run=false` would be a real
 * write. A repeated parameter is ambiguous, so it is 422 naming it, and the last value never wins.
 * Own properties only, whatever the name: `?__proto__=1` is a parameter like any other.
 */
export function singleValuedQuery(
  event: Pick<APIGatewayProxyEvent, 'queryStringParameters' | 'multiValueQueryStringParameters'>,
): Record<string, string> | Refused {
  // Object.fromEntries defines own properties, `__proto__` included; assignment would set the prototype.
  const multi = event.multiValueQueryStringParameters;
  if (!multi) return Object.fromEntries(Object.entries(event.queryStringParameters ?? {})) as Record<string, string>;
  const repeated = Object.entries(multi).find(([, values]) => (values?.length ?? 0) > 1);
  if (repeated)
    return refused('validation_failed', `${repeated[0]} is given more than once; send it once.`, repeated[0]);
  const single = Object.entries(multi).flatMap(([name, values]) =>
    values?.[0] === undefined ? [] : [[name, values[0]]],
  );
  return Object.fromEntries(single) as Record<string, string>;
}

const tooLarge = () => refused('payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);

/**
 * JSON bodies: 1 MiB at most (413), UTF-8, no deeper than MAX_JSON_DEPTH, valid JSON (400), and an
 * object at the top (400).
 *
 * In place of `@middy/http-json-body-parser` (v6), which does not fit the contract: it answers a
 * body without an `application/json` Content-Type, and malformed JSON, with 415 (the contract
 * says 400 `invalid_json`), throws http-errors rather than our `{code, message, field}`, has no
 * size limit, lets arrays and scalars through, and overwrites `event.body`. Each of those would
 * need a wrapper around it; these lines are the whole rule.
 */
export const jsonBody = (): Middleware =>
  checking((request) => {
    const { event } = request;
    if (event.httpMethod === 'GET' || event.httpMethod === 'HEAD') return undefined;
    const text = bodyText(event);
    if (isRefused(text)) return text;
    if (text.trim() === '') {
      // PUT and PATCH exist to carry a JSON object; a POST action (publish) may come without one.
      if (event.httpMethod === 'PUT' || event.httpMethod === 'PATCH') return notAnObject();
      internal(request).body = undefined;
      return undefined;
    }
    if (nestsDeeperThan(text))
      return refused('invalid_json', `The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return refused('invalid_json', 'The request body is not valid JSON.');
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return notAnObject();
    internal(request).body = body;
    return undefined;
  });

const notAnObject = () => refused('invalid_json', 'The request body must be a JSON object.');
