import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { canonicalPath, isWriteRoute, type Group, type OperationOf, type RequestPrincipal } from './api-routes.ts';
import {
  authorizedKey,
  internal,
  jsonBody,
  resolveRoute,
  responseShaper,
  singleValuedQuery,
  withRequestState,
} from './middlewares.ts';
import { json, type RouteResult } from './response.ts';
import { problemResult } from './error-status.ts';
import { instrument, NO_EARLY_TIMEOUT } from './instrument.ts';
import { DRY_RUN_PARAM, dryRunWrite, takeDryRun, type CurrentStates, type CurrentStatesOf } from './dry-run.ts';
import type { Principal } from '#domain/principal.ts';
import { isRefused, type Refused } from '#domain/outcome.ts';
import type { RequestContext } from '#shared/context.ts';
import { apiOrigin } from './origin.ts';

export { instrument, NO_EARLY_TIMEOUT };

export interface RouteInput {
  principal: RequestPrincipal;
  pathParameters: Record<string, string>;
  /** Single-valued query parameters, names as sent (`filter[name]`). */
  query: Record<string, string>;
  body: unknown;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  requestId: string;
  /** Absolute URL of this request's path, without the query (list `path`, page links). */
  url: string;
  method: string;
  /** The request path in one spelling (route template + decoded parameters): the idempotency scope. */
  path: string;
}

/** One operation: its input parsed from the request, a use case called with the request context, the answer. */
export type RouteFn = (ctx: RequestContext, input: RouteInput) => Promise<RouteResult>;

/** One route function for every operation of a group: a missing one is a compile error. */
export type GroupOperations<G extends Group> = Record<OperationOf<G>, RouteFn>;

/** A route's result as the proxy answer; to HEAD, the GET answer's status and headers, Content-Length included (RFC 9110 9.3.2), no body. */
function respond(event: APIGatewayProxyEvent, result: RouteResult): APIGatewayProxyResult {
  const response = json(result.status ?? 200, result.body, result.headers);
  if (event.httpMethod !== 'HEAD') return response;
  const length = Buffer.byteLength(response.body, response.isBase64Encoded ? 'base64' : 'utf8');
  return { ...response, headers: { ...response.headers, 'Content-Length': String(length) }, body: '' };
}

export function absoluteUrl(event: APIGatewayProxyEvent): string {
  // requestContext.path carries the stage prefix on execute-api hosts, event.path does not.
  return `${apiOrigin(event)}${event.requestContext?.path ?? event.path}`;
}

/**
 * One endpoint group's Lambda: the shared middy chain, then the operation the route table names.
 * Middleware order is the order of the checks a client sees: 404/405, 401, 429, 403, 413/400, then
 * the operation.
 */
export function createHttpHandler<G extends Group>(
  _group: G,
  operations: GroupOperations<G>,
  /**
   * The groups that write pass the write budget (docs/api.md#write-budget), and what each write
   * addresses as stored now, for its dry run (docs/api.md#dry-runs); a read-only group's bundle
   * stays without either.
   */
  options: {
    spendWriteBudget?: (
      ctx: RequestContext,
      principal: Principal,
      statusChange: boolean,
    ) => Promise<Refused | undefined>;
    currentStates?: CurrentStatesOf<G>;
  } = {},
) {
  const byName: Readonly<Record<string, RouteFn>> = operations;
  const chain = middy<APIGatewayProxyEvent, APIGatewayProxyResult>(NO_EARLY_TIMEOUT)
    .use(httpHeaderNormalizer())
    .use(responseShaper())
    .use(resolveRoute())
    .use(authorizedKey())
    .use(jsonBody())
    .handler(async (event, context) => {
      const state = internal({ context });
      const ctx = state.ctx;
      const route = state.route!;
      const operation = byName[route.operation];
      // API Gateway routes only this group's resources here; anything else is a wiring fault.
      if (!operation) throw new Error(`operation ${route.operation} does not belong to this group`);
      const sent = singleValuedQuery(event);
      if (isRefused(sent)) return respond(event, problemResult(sent));
      // Only a request that names `dry_run` is read for one: every other write runs as sent.
      const taken = Object.hasOwn(sent, DRY_RUN_PARAM) ? takeDryRun(route.operation, sent) : undefined;
      if (isRefused(taken)) return respond(event, problemResult(taken));
      const { dryRun, query } = taken ?? { dryRun: false, query: sent };
      const input: RouteInput = {
        principal: state.principal!,
        pathParameters: (event.pathParameters ?? {}) as Record<string, string>,
        query,
        body: state.body,
        headers: (event.headers ?? {}) as Record<string, string>,
        requestId: event.requestContext?.requestId ?? '',
        // Worked out when read: only a list that links its pages does (list-products.ts).
        get url() {
          return absoluteUrl(event);
        },
        method: event.httpMethod,
        path: canonicalPath(route, event.pathParameters ?? {}),
      };
      // A dry run (docs/api.md#dry-runs) runs the same operation with its writes held back.
      // A write spends one of the key's write budget when the key has one, and one over it is
      // refused before it runs; a dry run writes nothing, so it spends nothing.
      const overBudget =
        !dryRun &&
        input.principal.budget &&
        isWriteRoute(route) &&
        (await options.spendWriteBudget?.(ctx, input.principal, route.operation === 'setOrderStatus'));
      const result = overBudget
        ? problemResult(overBudget)
        : dryRun
          ? await dryRunWrite(ctx, route.operation, operation, input, (options.currentStates ?? {}) as CurrentStates)
          : await operation(ctx, input);
      return respond(event, result);
    });
  return instrument<APIGatewayProxyEvent, APIGatewayProxyResult>((event, context, ctx) =>
    chain(event, withRequestState(context, ctx)),
  );
}
