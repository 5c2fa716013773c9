/**
 * API Gateway (REST, Lambda proxy) driven by the templates: routes from the resource tree, the
 * REQUEST authorizer with its identity sources and result cache, the proxy event, and every
 * answer of the gateway's own rendered from the template's gateway responses. The event shape
 * is the one the route-table gateway (emulation/local/gateway.ts) builds.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { readBody, send } from '#emulation/local/http-io.ts';
import { matchMethod, type ApiAuthorizer, type ApiModel } from './api-model.ts';
import { renderGatewayResponse } from './gateway-response.ts';
import { renderAccessLog } from './access-log.ts';
import { isBinary, runMock } from './mock-integration.ts';
import { LambdaError } from './sandbox.ts';
import { evaluateWebAcl } from './waf.ts';

export type Invoke = (functionArn: string, event: unknown) => Promise<unknown>;

/** Lambda's synchronous payload limit, for the event sent and the result returned. */
const LAMBDA_PAYLOAD_LIMIT = 6 * 1024 * 1024;

/**
 * A Lambda proxy integration that failed is the INTEGRATION_FAILURE gateway response, whatever
 * the cause (AWS's access logs name that `$context.error.responseType` for a function error, a
 * crash and an oversized result alike); without a StatusCode of its own it answers the cause's
 * status, not the type's table value (504): 502 when the function ran and failed, 500 when Lambda
 * refused the invocation (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html).
 * shared/http/gateway-responses.ts, functionFailed, says what our template sets for it.
 */
const FUNCTION_ERROR = 502;
const REFUSED_INVOCATION = 500;

function policyAllows(result: Partial<APIGatewayAuthorizerResult>, methodArn: string): boolean {
  const matches = (pattern: string) =>
    new RegExp(
      `^${pattern
        .split('*')
        .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    ).test(methodArn);
  const applies = (s: { Resource?: string | string[] }) => [s.Resource ?? []].flat().some(matches);
  const statements = (result.policyDocument?.Statement ?? []) as { Effect: string; Resource?: string | string[] }[];
  if (statements.some((s) => s.Effect === 'Deny' && applies(s))) return false;
  return statements.some((s) => s.Effect === 'Allow' && applies(s));
}

/** `accessLog` receives each request's line for the stage's access log group, when it has one. */
export function createTemplateGateway(
  model: ApiModel,
  invoke: Invoke,
  log?: (line: string) => void,
  accessLog?: (group: string, line: string) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const cache = new Map<string, { result: APIGatewayAuthorizerResult; until: number }>();

  return (req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    const url = new URL(req.url ?? '/', 'http://local');
    const startedAt = new Date();
    let authorizerContext: Record<string, unknown> = {};
    let resourcePath: string | undefined;
    let errorType: string | undefined;
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      send(res, status, body, headers);
      const latencyMs = Math.round(performance.now() - started);
      log?.(`${req.method} ${url.pathname}${url.search} ${status} ${latencyMs}ms rid=${requestId}`);
      if (accessLog && model.accessLog) {
        const responseLength =
          typeof body === 'string' || Buffer.isBuffer(body)
            ? Buffer.byteLength(body)
            : Buffer.byteLength(JSON.stringify(body ?? ''));
        const line = renderAccessLog(model.accessLog.format, {
          requestId,
          startedAt,
          latencyMs,
          sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
          userAgent: req.headers['user-agent'],
          httpMethod: req.method ?? 'GET',
          resourcePath,
          path: `/${model.stage}${url.pathname}`,
          status,
          responseLength,
          authorizer: authorizerContext,
          errorType,
        });
        accessLog(model.accessLog.destinationArn, line);
      }
    };
    const gatewayResponse = (type: string, status?: number) => {
      errorType = type;
      const r = renderGatewayResponse(model, type, { authorizer: authorizerContext, requestId }, status);
      reply(r.status, r.body, r.headers);
    };
    const fail = (why: string, type: string, status?: number) => {
      process.stderr.write(`rehearsal: ${req.method} ${url.pathname}: ${why}\n`);
      gatewayResponse(type, status);
    };

    void (async () => {
      const body = await readBody(req);
      if (body === 'too_large') return gatewayResponse('REQUEST_TOO_LARGE');
      if (model.webAcl) {
        const lowerHeaders = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), [v ?? ''].flat().join(',')]),
        );
        const verdict = evaluateWebAcl(model.webAcl, {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.search.slice(1),
          headers: lowerHeaders,
          body,
        });
        if (verdict.action === 'block')
          return verdict.response
            ? reply(verdict.response.status, verdict.response.body, verdict.response.headers)
            : gatewayResponse('WAF_FILTERED');
      }
      const { method, pathParameters } = matchMethod(model, req.method ?? 'GET', url.pathname);
      if (!method) return gatewayResponse('MISSING_AUTHENTICATION_TOKEN');
      resourcePath = method.resourcePath;

      const headers: Record<string, string> = {};
      const multiValueHeaders: Record<string, string[]> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        const values = [value].flat();
        headers[name] = values.join(',');
        multiValueHeaders[name] = values;
      }
      headers['x-forwarded-proto'] ??= 'http';
      const query: Record<string, string> = {};
      const multiQuery: Record<string, string[]> = {};
      for (const [k, v] of url.searchParams) {
        query[k] = v;
        (multiQuery[k] ??= []).push(v);
      }
      // On an ANY method too, the event and the method ARN carry the request's own verb.
      const httpMethod = req.method ?? 'GET';
      const methodArn = `arn:aws:execute-api:local:000000000000:${model.restApiId}/${model.stage}/${httpMethod}${method.resourcePath}`;
      const requestContext = {
        accountId: '000000000000',
        apiId: model.restApiId,
        stage: model.stage,
        requestId,
        resourceId: method.resourcePath,
        resourcePath: method.resourcePath,
        httpMethod,
        path: url.pathname,
        domainName: headers.host ?? '127.0.0.1',
        protocol: 'HTTP/1.1',
        requestTimeEpoch: Date.now(),
        identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? null },
        authorizer: null as Record<string, unknown> | null,
      };
      const common = {
        resource: method.resourcePath,
        path: url.pathname,
        httpMethod,
        headers,
        multiValueHeaders,
        pathParameters,
        stageVariables: null,
        requestContext,
      };

      if (method.authorizationType === 'CUSTOM' && method.authorizer) {
        const auth = await authorize(method.authorizer, {
          ...common,
          type: 'REQUEST',
          methodArn,
          queryStringParameters: query,
          multiValueQueryStringParameters: multiQuery,
        });
        if (auth === 'unauthorized') return gatewayResponse('UNAUTHORIZED');
        if (auth === 'failed') return gatewayResponse('AUTHORIZER_CONFIGURATION_ERROR');
        if (!auth.policyDocument) return fail('the authorizer returned no policy document', 'AUTHORIZER_FAILURE');
        authorizerContext = (auth.context ?? {}) as Record<string, unknown>;
        if (!policyAllows(auth, methodArn)) return gatewayResponse('ACCESS_DENIED');
        requestContext.authorizer = { ...authorizerContext, principalId: auth.principalId };
      }
      if (method.integration.type === 'MOCK') {
        const vars = {
          context: { ...requestContext, authorizer: authorizerContext },
          stageVariables: {},
        };
        const mock = runMock(
          method.integration,
          { contentType: headers['content-type'], binaryMediaTypes: model.binaryMediaTypes },
          vars,
        );
        if (!mock.ok)
          return fail(`MOCK ${method.httpMethod} ${method.resourcePath}: ${mock.reason}`, 'API_CONFIGURATION_ERROR');
        return reply(mock.status, mock.body, mock.headers);
      }
      if (!method.functionArn)
        return fail(`${method.integration.type} integrations are not rehearsed`, 'INTEGRATION_FAILURE');
      // A body of a binary media type reaches a proxy integration as its bytes, base64-encoded.
      const binary = isBinary(model.binaryMediaTypes, headers['content-type'] ?? 'application/json');
      const event = {
        ...common,
        queryStringParameters: url.searchParams.size ? query : null,
        multiValueQueryStringParameters: url.searchParams.size ? multiQuery : null,
        body: body.length ? body.toString(binary ? 'base64' : 'utf8') : null,
        isBase64Encoded: binary,
      };
      // Lambda refuses an event over its payload limit: an invocation Lambda refuses (see below).
      const eventBytes = Buffer.byteLength(JSON.stringify(event));
      if (eventBytes > LAMBDA_PAYLOAD_LIMIT)
        return fail(
          `Lambda refused the invocation: the event is ${eventBytes} bytes, over its ${LAMBDA_PAYLOAD_LIMIT}-byte payload limit`,
          'INTEGRATION_FAILURE',
          REFUSED_INVOCATION,
        );
      let result: { statusCode?: number; body?: string; headers?: Record<string, string>; isBase64Encoded?: boolean };
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<'timeout'>(
          (resolve) => (timer = setTimeout(() => resolve('timeout'), method.integration.timeoutMs)),
        );
        const outcome = await Promise.race([invoke(method.functionArn, event), timeout]);
        if (outcome === 'timeout')
          return fail(
            `no answer within the integration timeout (${method.integration.timeoutMs} ms)`,
            'INTEGRATION_TIMEOUT',
          );
        result = outcome as typeof result;
      } catch (err) {
        // The function failed (an error, its own timeout, a crash), or Lambda refused to run it.
        return fail(
          `${method.httpMethod} ${method.resourcePath} Lambda failed: ${(err as Error).name}: ${(err as Error).message}`,
          'INTEGRATION_FAILURE',
          err instanceof LambdaError ? FUNCTION_ERROR : REFUSED_INVOCATION,
        );
      } finally {
        clearTimeout(timer);
      }
      // Lambda fails a result over its payload limit as a function error.
      if (Buffer.byteLength(JSON.stringify(result ?? null)) > LAMBDA_PAYLOAD_LIMIT)
        return fail('the Lambda result is over the 6 MB payload limit', 'INTEGRATION_FAILURE', FUNCTION_ERROR);
      // A malformed proxy result is a 502 too; which response type AWS renders it through is not
      // documented, and LocalStack's model of API Gateway renders it through DEFAULT_5XX, as here
      // (localstack-core/localstack/services/apigateway/next_gen/execute_api/integrations/aws.py).
      if (!result || typeof result.statusCode !== 'number')
        return fail(`${method.httpMethod} ${method.resourcePath}: malformed Lambda proxy response`, 'DEFAULT_5XX', 502);
      // A base64 result is decoded when the client accepts (first Accept type) a binary media type.
      const accepted =
        headers.accept?.split(',')[0] ??
        Object.entries(result.headers ?? {}).find(([k]) => k.toLowerCase() === 'content-type')?.[1] ??
        'application/json';
      const decode = result.isBase64Encoded && result.body && isBinary(model.binaryMediaTypes, accepted);
      const payload = decode ? Buffer.from(result.body!, 'base64') : (result.body ?? '');
      reply(result.statusCode, payload, result.headers ?? {});
    })().catch((err: unknown) => {
      process.stderr.write(`rehearsal gateway error: ${(err as Error).stack}\n`);
      if (!res.headersSent) gatewayResponse('DEFAULT_5XX');
    });
  };

  async function authorize(
    authorizer: ApiAuthorizer,
    event: { headers: Record<string, string>; methodArn: string } & Record<string, unknown>,
  ): Promise<Partial<APIGatewayAuthorizerResult> | 'unauthorized' | 'failed'> {
    const identity = authorizer.identityHeaders.map((h) => event.headers[h]);
    // A REQUEST authorizer is not called when an identity source is missing.
    if (identity.some((v) => v === undefined || v === '')) return 'unauthorized';
    const cacheKey = identity.join('\u0000');
    const cached = authorizer.ttlSeconds > 0 ? cache.get(cacheKey) : undefined;
    if (cached && cached.until > Date.now()) return cached.result;
    try {
      const result = (await invoke(authorizer.functionArn, event)) as APIGatewayAuthorizerResult;
      if (authorizer.ttlSeconds > 0) cache.set(cacheKey, { result, until: Date.now() + authorizer.ttlSeconds * 1000 });
      return result;
    } catch (err) {
      if ((err as Error).message === 'Unauthorized') return 'unauthorized';
      process.stderr.write(`rehearsal: authorizer failed: ${(err as Error).name}: ${(err as Error).message}\n`);
      return 'failed';
    }
  }
}
