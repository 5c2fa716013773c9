import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { DomainError } from '../domain/errors.ts';
import { json } from './response.ts';
import { errorResponse } from './error-status.ts';
import { findRoute, type ApiRoute } from './api-routes.ts';
import { principalFromContext, type RequestPrincipal } from './authorizer-context.ts';
import { errorFields, log } from '../log.ts';
import { addInvocationContext } from '../log-context.ts';

type Request = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, RequestInternal>;
type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context, RequestInternal>;

export interface RequestInternal extends Record<string, unknown> {
  route?: ApiRoute;
  principal?: RequestPrincipal;
  body?: unknown;
  rateHeaders?: Record<string, string>;
}

export const MAX_BODY_BYTES = 1024 * 1024;

/** Per-request state shared between the middlewares and the router (on the Lambda context). */
export function internal(request: { context: unknown }): RequestInternal {
  const context = request.context as { app?: RequestInternal };
  context.app ??= {};
  return context.app;
}

/**
 * Turns every failure into the contract's `{code, message, field}` body and puts the
 * RateLimit-* headers on every response, success or not. Unknown errors become 500
 * `internal_error` with the request id; their cause goes to the log, never to the client.
 */
export function responseShaper(): Middleware {
  const addHeaders = (request: Request) => {
    const headers = internal(request).rateHeaders;
    if (headers && request.response) request.response.headers = { ...request.response.headers, ...headers };
  };
  return {
    after: addHeaders,
    onError: (request) => {
      const err = request.error;
      if (err instanceof DomainError) {
        request.response = errorResponse(err);
      } else {
        const requestId = request.event.requestContext?.requestId ?? 'unknown';
        log('error', 'unhandled error', { request_id: requestId, ...errorFields(err) });
        request.response = json(500, {
          code: 'internal_error',
          message: `Something went wrong on our side. Request id: ${requestId}.`,
          field: null,
        });
      }
      addHeaders(request);
    },
  };
}

/** The route this event belongs to, from API Gateway's `resource` (the same table built the API). */
export function resolveRoute(): Middleware {
  return {
    before: (request) => {
      const route = findRoute(request.event.httpMethod, request.event.resource);
      if (!route) throw new DomainError('not_found', 'No such endpoint.');
      internal(request).route = route;
    },
  };
}

/**
 * The authorizer resolved the key; this reads what it decided. The rate-limit verdict travels in
 * the authorizer context because an authorizer cannot answer 429 itself.
 */
export function authorizedKey(): Middleware {
  return {
    before: (request) => {
      const principal = principalFromContext(request.event.requestContext?.authorizer);
      if (!principal) throw new DomainError('unauthenticated', 'A valid API key is required (Authorization: Bearer <key>).');
      const state = internal(request);
      state.principal = principal;
      addInvocationContext({ key_id: principal.keyId, store_id: principal.storeId });
      state.rateHeaders = {
        'RateLimit-Limit': String(principal.rate.limit),
        'RateLimit-Remaining': String(principal.rate.remaining),
        'RateLimit-Reset': String(principal.rate.resetSeconds),
      };
      if (principal.rate.limited) {
        throw new DomainError('rate_limited', `This key exceeded its allowance of ${principal.rate.limit} requests per minute.`, null, principal.rate.resetSeconds);
      }
      // The authorizer flags a missing ability (context.missingAbility); the check is repeated here
      // from the route table so that a handler never relies on that flag alone.
      const route = state.route;
      if (route?.ability && !principal.abilities.includes(route.ability)) {
        throw new DomainError('forbidden', `This key lacks the ability ${route.ability}.`);
      }
    },
  };
}

/**
 * JSON bodies: 1 MiB at most (413), valid JSON (400), and an object at the top (400).
 *
 * In place of `@middy/http-json-body-parser` (v6), which does not fit the contract: it answers a
 * body without an `application/json` Content-Type, and malformed JSON, with 415 (the contract
 * says 400 `invalid_json`), throws http-errors rather than our `{code, message, field}`, has no
 * size limit, lets arrays and scalars through, and overwrites `event.body`. Each of those would
 * need a wrapper around it; these thirty lines are the whole rule.
 */
export function jsonBody(): Middleware {
  return {
    before: (request) => {
      const { event } = request;
      if (event.httpMethod === 'GET') return;
      const raw = event.body ?? '';
      const text = event.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
      if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) {
        throw new DomainError('payload_too_large', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
      }
      if (text.trim() === '') {
        // PUT and PATCH exist to carry a JSON object; a POST action (publish) may come without one.
        if (event.httpMethod === 'PUT' || event.httpMethod === 'PATCH') {
          throw new DomainError('invalid_json', 'The request body must be a JSON object.');
        }
        internal(request).body = undefined;
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new DomainError('invalid_json', 'The request body is not valid JSON.');
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw new DomainError('invalid_json', 'The request body must be a JSON object.');
      }
      internal(request).body = body;
    },
  };
}
