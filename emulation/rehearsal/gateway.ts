/**
 * API Gateway (REST, Lambda proxy) driven by the templates: routes from the resource tree, the
 * REQUEST authorizer with its identity sources and result cache, the proxy event, and every
 * answer of the gateway's own rendered from the template's gateway responses. The event shape
 * is the one the route-table gateway (emulation/local/gateway.ts) builds.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import { readBody, send } from '../local/gateway.ts';
import { matchMethod, type ApiAuthorizer, type ApiModel } from './api-model.ts';

export type Invoke = (functionArn: string, event: unknown) => Promise<unknown>;

/** Status of each gateway response type when the template does not set one. */
const DEFAULT_STATUS: Record<string, number> = {
  UNAUTHORIZED: 401,
  ACCESS_DENIED: 403,
  MISSING_AUTHENTICATION_TOKEN: 403,
  RESOURCE_NOT_FOUND: 404,
  REQUEST_TOO_LARGE: 413,
  THROTTLED: 429,
  AUTHORIZER_FAILURE: 500,
  AUTHORIZER_CONFIGURATION_ERROR: 500,
  INTEGRATION_FAILURE: 504,
  INTEGRATION_TIMEOUT: 504,
  DEFAULT_5XX: 502,
};
const BODY_LIMIT = 10 * 1024 * 1024;

function policyAllows(result: APIGatewayAuthorizerResult, methodArn: string): boolean {
  const matches = (pattern: string) => new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(methodArn);
  const applies = (s: { Resource?: string | string[] }) => [s.Resource ?? []].flat().some(matches);
  const statements = (result.policyDocument?.Statement ?? []) as { Effect: string; Resource?: string | string[] }[];
  if (statements.some((s) => s.Effect === 'Deny' && applies(s))) return false;
  return statements.some((s) => s.Effect === 'Allow' && applies(s));
}

export function createTemplateGateway(model: ApiModel, invoke: Invoke, log?: (line: string) => void): (req: IncomingMessage, res: ServerResponse) => void {
  const cache = new Map<string, { result: APIGatewayAuthorizerResult; until: number }>();

  return (req, res) => {
    const started = performance.now();
    const requestId = randomUUID();
    const url = new URL(req.url ?? '/', 'http://local');
    let authorizerContext: Record<string, unknown> = {};
    const reply = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      send(res, status, body, headers);
      log?.(`${req.method} ${url.pathname}${url.search} ${status} ${Math.round(performance.now() - started)}ms rid=${requestId}`);
    };
    const gatewayResponse = (type: string, status = DEFAULT_STATUS[type] ?? 500) => {
      const fallback = status >= 500 ? 'DEFAULT_5XX' : 'DEFAULT_4XX';
      const own = model.responses.get(type);
      const r = own ?? model.responses.get(fallback);
      const template = (r?.template ?? '{"message":"$context.error.messageString"}').replace(
        /\$context\.authorizer\.(\w+)/g,
        (_m, key: string) => String(authorizerContext[key] ?? ''),
      );
      reply(own?.statusCode ?? status, template, r?.headers ?? {});
    };

    void (async () => {
      const body = await readBody(req);
      if (body === 'too_large') return gatewayResponse('REQUEST_TOO_LARGE');
      const { method, pathParameters } = matchMethod(model, req.method ?? 'GET', url.pathname);
      if (!method) return gatewayResponse('MISSING_AUTHENTICATION_TOKEN');

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
      const methodArn = `arn:aws:execute-api:local:000000000000:${model.restApiId}/${model.stage}/${method.httpMethod}${method.resourcePath}`;
      const requestContext = {
        accountId: '000000000000',
        apiId: model.restApiId,
        stage: model.stage,
        requestId,
        resourceId: method.resourcePath,
        resourcePath: method.resourcePath,
        httpMethod: method.httpMethod,
        path: url.pathname,
        domainName: headers.host ?? '127.0.0.1',
        protocol: 'HTTP/1.1',
        requestTimeEpoch: Date.now(),
        identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1', userAgent: headers['user-agent'] ?? null },
        authorizer: null as Record<string, unknown> | null,
      };
      const common = { resource: method.resourcePath, path: url.pathname, httpMethod: method.httpMethod, headers, multiValueHeaders, pathParameters, stageVariables: null, requestContext };

      if (method.authorizationType === 'CUSTOM' && method.authorizer) {
        const auth = await authorize(method.authorizer, { ...common, type: 'REQUEST', methodArn, queryStringParameters: query, multiValueQueryStringParameters: multiQuery });
        if (auth === 'unauthorized') return gatewayResponse('UNAUTHORIZED');
        if (auth === 'failed') return gatewayResponse('AUTHORIZER_FAILURE');
        authorizerContext = (auth.context ?? {}) as Record<string, unknown>;
        if (!policyAllows(auth, methodArn)) return gatewayResponse('ACCESS_DENIED');
        requestContext.authorizer = { ...authorizerContext, principalId: auth.principalId };
      }
      if (!method.functionArn) return gatewayResponse('INTEGRATION_FAILURE');
      const event = {
        ...common,
        queryStringParameters: url.searchParams.size ? query : null,
        multiValueQueryStringParameters: url.searchParams.size ? multiQuery : null,
        body: body.length ? body.toString('utf8') : null,
        isBase64Encoded: false,
      };
      let result: { statusCode?: number; body?: string; headers?: Record<string, string>; isBase64Encoded?: boolean };
      try {
        result = (await invoke(method.functionArn, event)) as typeof result;
      } catch (err) {
        process.stderr.write(`rehearsal: ${method.httpMethod} ${method.resourcePath} Lambda failed: ${(err as Error).name}: ${(err as Error).message}\n`);
        return gatewayResponse('DEFAULT_5XX', 502);
      }
      if (!result || typeof result.statusCode !== 'number') {
        process.stderr.write(`rehearsal: ${method.httpMethod} ${method.resourcePath}: malformed Lambda proxy response\n`);
        return gatewayResponse('DEFAULT_5XX', 502);
      }
      const payload = result.isBase64Encoded && result.body ? Buffer.from(result.body, 'base64').toString('utf8') : (result.body ?? '');
      reply(result.statusCode, payload, result.headers ?? {});
    })().catch((err: unknown) => {
      process.stderr.write(`rehearsal gateway error: ${(err as Error).stack}\n`);
      if (!res.headersSent) gatewayResponse('DEFAULT_5XX', 500);
    });
  };

  async function authorize(authorizer: ApiAuthorizer, event: { headers: Record<string, string>; methodArn: string } & Record<string, unknown>): Promise<APIGatewayAuthorizerResult | 'unauthorized' | 'failed'> {
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
