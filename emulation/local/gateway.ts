import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type {
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  Context,
} from 'aws-lambda';
import { API_BASE_PATH, OAUTH_ROUTES, resourceMetadataUrl, resourceOf, type Group } from '#http/api-routes.ts';
import { matchPath } from './match-path.ts';
import { readBody, send } from './http-io.ts';
import { follow, take } from './request-costs.ts';
import { httpLambdas, type HttpLambda } from './lambdas.ts';
import { handler as authorizer } from '#functions/authorizer/handler.ts';
import { bearerChallenge, functionFailed, GATEWAY_RESPONSES, invalidTokenChallenge } from '#http/gateway-responses.ts';
import { publicRoute } from './docs-routes.ts';
import { answerClientError } from './client-error.ts';
import { redactQuery } from '#shared/log.ts';
import { errorCodeOf, type RequestLogEntry } from './request-log.ts';
import { DomainError } from '#domain/errors.ts';
import { errorBody, errorHeaders } from '#http/error-status.ts';

function lambdaContext(name: string, requestId: string): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${name}`,
    memoryLimitInMB: '256',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${name}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 29_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

export interface GatewayOptions {
  /** Extra handlers for paths outside the route table (the MCP endpoint). */
  extraRoutes?: Record<string, (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>>;
  log?: (line: string) => void;
  /** Called once per request with its cost (the benchmark reads this). */
  onRequest?: (info: {
    /** As in the answer's X-Request-Id. */
    requestId: string;
    method: string;
    path: string;
    status: number;
    ms: number;
    calls: number;
    rcu: number;
    wcu: number;
    ops: string[];
  }) => void;
  /** Called once per request with its access-log line (emulation/local/request-log.ts). */
  requestLog?: (entry: RequestLogEntry) => void;
  /**
   * Awaited once the authorizer has allowed a request, before its handler runs: where one Lambda's
   * work ends and the next one's begins (bench/code-path.ts counts each one's files apart).
   */
  onAuthorized?: () => Promise<void>;
}

/** How long an idle keep-alive connection stays open (`Keep-Alive: timeout=65`). */
export const KEEP_ALIVE_MS = 65_000;

/**
 * The local API Gateway: turns each HTTP request into the REST API (v1) proxy event the
 * deployed Lambdas get, runs the Lambda authorizer, then the endpoint group's handler. The
 * gateway's own answers (401, 403 from a Deny, 404) have the bodies the CDK stack configures.
 */
export function createGateway(options: GatewayOptions = {}): Server {
  const loaded = new Map<string, Promise<HttpLambda>>();
  const lambdaFor = (group: Group | 'oauth') => {
    if (!loaded.has(group))
      loaded.set(
        group,
        (group === 'oauth' ? import('#functions/oauth/handler.ts') : httpLambdas[group]()).then((m) => m.handler),
      );
    return loaded.get(group)!;
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    // Every answer names its request, the gateway's own included (API Gateway maps context.requestId).
    res.setHeader('X-Request-Id', requestId);
    const url = new URL(req.url ?? '/', 'http://local');
    const time = new Date().toISOString();
    let status = 0;
    let answer: unknown;
    let who: Record<string, unknown> = {};
    const finish = (stats?: { calls: number; rcu: number; wcu: number; ops: string[] }) => {
      const ms = performance.now() - started;
      options.requestLog?.({
        request_id: requestId,
        time,
        method: req.method ?? '',
        path: url.pathname,
        status,
        latency_ms: Math.round(ms),
        key_id: who.keyId === undefined ? null : String(who.keyId),
        store_id: who.storeId === undefined ? null : String(who.storeId),
        error_code: errorCodeOf(status, answer),
      });
      options.onRequest?.({
        requestId,
        method: req.method ?? '',
        path: url.pathname,
        status,
        ms,
        calls: stats?.calls ?? 0,
        rcu: stats?.rcu ?? 0,
        wcu: stats?.wcu ?? 0,
        ops: stats?.ops ?? [],
      });
      const ddb = stats
        ? ` ddb=${stats.calls}${stats.calls ? ` [${stats.ops.join(',')}] rcu=${stats.rcu} wcu=${stats.wcu}` : ''}`
        : '';
      options.log?.(
        `${req.method} ${url.pathname}${redactQuery(url.search)} ${status} ${Math.round(performance.now() - started)}ms${ddb} rid=${requestId}`,
      );
    };
    const reply = (s: number, body: unknown, headers: Record<string, string> = {}) => {
      status = s;
      answer = body;
      send(res, s, body, headers);
    };

    void (async () => {
      const body = await readBody(req);
      // Said, not done silently: a keep-alive client must not send its next request on a socket
      // the gateway is about to close (a body past the drain limit was not read to its end).
      if (body === 'too_large') return (reply(413, GATEWAY_RESPONSES.tooLarge, { Connection: 'close' }), finish());
      const extra = options.extraRoutes?.[url.pathname];
      if (extra) {
        await extra(req, res, body);
        status = res.statusCode;
        return finish();
      }
      const open = await publicRoute(
        req.method === 'HEAD' ? 'GET' : (req.method ?? 'GET'),
        url.pathname,
        `${req.headers['x-forwarded-proto'] ?? 'http'}://${req.headers.host ?? '127.0.0.1'}${API_BASE_PATH}`,
      );
      if (open) return reply(open.status, open.body, { 'Content-Type': open.contentType });
      const method = req.method ?? 'GET';
      // The OAuth endpoints: public, outside API_BASE_PATH, one Lambda that answers its own 405s.
      const oauthPath = OAUTH_ROUTES.find((r) => r.path === url.pathname)?.path;
      const matched = oauthPath ? undefined : matchPath(method, url.pathname);
      if (matched && !matched.route && !matched.pathOf) return reply(404, GATEWAY_RESPONSES.notFound);
      // A known path without this method goes, unauthorized, to its group's Lambda, which answers
      // 405 with Allow: the CDK stack's ANY method on every resource does the same.
      const unknownMethod = !matched?.route;
      const { route, pathParameters } = matched
        ? matched.route
          ? matched
          : matched.pathOf!
        : { route: { group: 'oauth' as const, path: oauthPath! }, pathParameters: {} };
      const lambda = await lambdaFor(route.group);

      const headers: Record<string, string> = {};
      const multiValueHeaders: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        const values = Array.isArray(value) ? value : [value];
        headers[name] = values.join(',');
        multiValueHeaders[name] = values;
      }
      // Own properties whatever the name, as in the JSON event API Gateway sends: `?__proto__=1`
      // must be a parameter like any other, not a write to the prototype.
      const query: Record<string, string> = Object.create(null);
      const multiQuery: Record<string, string[]> = Object.create(null);
      for (const [k, v] of url.searchParams) {
        query[k] = v;
        (multiQuery[k] ??= []).push(v);
      }
      const resource = oauthPath ?? resourceOf(route as { path: string });
      // The API's own address, never the client's Host or X-Forwarded-* (API Gateway sets both itself).
      const local = req.socket.localAddress ?? '127.0.0.1';
      const host = `${local.includes(':') ? `[${local}]` : local}:${req.socket.localPort}`;
      const metadataUrl = resourceMetadataUrl(`http://${host}`);
      headers['x-forwarded-proto'] = 'http';
      headers['x-forwarded-host'] = host;
      const requestContext = {
        accountId: '000000000000',
        apiId: 'local',
        stage: 'local',
        requestId,
        resourceId: 'local',
        resourcePath: resource,
        httpMethod: method,
        path: url.pathname,
        domainName: host,
        protocol: 'HTTP/1.1',
        requestTimeEpoch: Date.now(),
        identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? null },
        authorizer: null as Record<string, unknown> | null,
      };

      // The request's DynamoDB calls, the authorizer's and the handler's (./request-costs.ts).
      follow(requestId);
      let cost;
      try {
        await (async () => {
          const authEvent = {
            type: 'REQUEST',
            methodArn: `arn:aws:execute-api:local:000000000000:local/local/${method}${resource}`,
            resource,
            path: url.pathname,
            httpMethod: method,
            headers,
            multiValueHeaders,
            queryStringParameters: query,
            multiValueQueryStringParameters: multiQuery,
            pathParameters,
            stageVariables: null,
            requestContext,
          } as unknown as APIGatewayRequestAuthorizerEvent;
          // The CDK stack's ANY method (unknown methods, 405) has no authorizer.
          if (!unknownMethod) {
            let policy;
            try {
              policy = await authorizer(authEvent, lambdaContext('authorizer', requestId));
            } catch (err) {
              if ((err as Error).message === 'Unauthorized')
                return reply(401, GATEWAY_RESPONSES.unauthorized, { 'WWW-Authenticate': bearerChallenge(metadataUrl) });
              // The store could not say who the key is: not a 401 (the key may be fine) but a retryable
              // 503, as the AWS stack's AUTHORIZER_FAILURE gateway response (docs/availability.md).
              if (err instanceof DomainError && err.code === 'service_unavailable')
                return reply(503, errorBody(err), errorHeaders(err));
              process.stderr.write(`authorizer failed: ${(err as Error).stack}\n`);
              return reply(500, GATEWAY_RESPONSES.internal);
            }
            const context = (policy.context ?? {}) as Record<string, unknown>;
            who = context;
            // As the stack's ACCESS_DENIED gateway response: a token that is no key, no handler run.
            if (policy.policyDocument.Statement.some((s) => s.Effect === 'Deny')) {
              return reply(401, GATEWAY_RESPONSES.unauthorized, {
                'WWW-Authenticate': invalidTokenChallenge(metadataUrl),
              });
            }
            requestContext.authorizer = { ...context, principalId: policy.principalId };
            await options.onAuthorized?.();
          }
          const event = {
            resource,
            path: url.pathname,
            httpMethod: method,
            headers,
            multiValueHeaders,
            queryStringParameters: url.searchParams.size ? query : null,
            multiValueQueryStringParameters: url.searchParams.size ? multiQuery : null,
            pathParameters,
            stageVariables: null,
            requestContext,
            // The REST API declares every media type binary (infra/api-stack.ts): bytes arrive
            // base64-encoded and untouched, and the handler decides whether they are UTF-8.
            body: body.length ? body.toString('base64') : null,
            isBase64Encoded: body.length > 0,
          } as unknown as APIGatewayProxyEvent;
          let result: APIGatewayProxyResult | undefined;
          try {
            result = await lambda(event, lambdaContext(route.group, requestId));
          } catch (err) {
            // As API Gateway answers a function that failed (its INTEGRATION_FAILURE response).
            process.stderr.write(`handler failed: ${(err as Error).stack}\n`);
            const failed = functionFailed();
            return reply(failed.status, failed.body, failed.headers);
          }
          // A result that is no proxy response: API Gateway's 502, through DEFAULT_5XX as the
          // rehearsal's gateway renders it (emulation/rehearsal/gateway.ts says why that type).
          if (typeof result?.statusCode !== 'number') {
            process.stderr.write(`handler failed: ${method} ${resource}: malformed Lambda proxy response\n`);
            return reply(502, GATEWAY_RESPONSES.internal);
          }
          status = result.statusCode;
          answer = result.body;
          send(res, result.statusCode, result.body, (result.headers ?? {}) as Record<string, string>);
        })();
      } finally {
        cost = take(requestId);
      }
      finish(cost);
    })().catch((err) => {
      process.stderr.write(`gateway error: ${(err as Error).stack}\n`);
      if (!res.headersSent) reply(500, GATEWAY_RESPONSES.internal);
      finish();
    });
  });
  // A request Node cannot parse (a malformed request line, headers past its limit) gets the
  // API's JSON error body, not Node's empty 400/431.
  server.on('clientError', answerClientError);
  // An idle keep-alive connection is closed by the client, never under it: Node's default of 5 s
  // lets a busy machine's client send its next request on a socket the server is just closing
  // ("other side closed"). Like a load balancer's idle timeout (60 s), with the header timeout above it.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1_000;
  return server;
}

export { API_BASE_PATH };
