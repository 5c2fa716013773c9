import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import {
  bearerChallenge,
  functionFailed,
  gatewayResponseTable,
  invalidTokenChallenge,
} from '#http/gateway-responses.ts';
import { gatewayResponseOf, type ApiModel } from '#emulation/rehearsal/api-model.ts';
import { createTemplateGateway, type Invoke } from '#emulation/rehearsal/gateway.ts';
import { LambdaError } from '#emulation/rehearsal/sandbox.ts';
import { ERROR_CATALOGUE } from '#http/openapi/error-catalogue.ts';
import { GATEWAY_DOC, renderGatewayDoc } from '#infra/gateway-docs.ts';
import { DEFAULT_SETTINGS } from '#infra/settings.ts';
import { deployedMetadataUrl, joined, synthStacks } from './synth.ts';

type GatewayResponse = {
  Properties: {
    ResponseType: string;
    StatusCode: string;
    ResponseTemplates: Record<string, string>;
    ResponseParameters: Record<string, unknown>;
  };
};

/** API Gateway's own answers: one per type, each with its status and a catalogued code, as docs/gateway.md says. */
const { api, template } = synthStacks({ rateLimitPerMinute: 45 });

describe('gateway responses', () => {
  const inTemplate = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')) as GatewayResponse[];
  const metadataUrl = deployedMetadataUrl(api);
  const table = gatewayResponseTable(45, metadataUrl);

  it('sets every type API Gateway has, so DEFAULT_4XX/5XX lend their status to none', () => {
    const known = Object.values(apigw.ResponseType)
      .filter((v): v is apigw.ResponseType => v instanceof apigw.ResponseType)
      .map((t) => t.responseType);
    expect(known.length).toBeGreaterThanOrEqual(21);
    expect(inTemplate.map((r) => r.Properties.ResponseType).sort()).toEqual([...known].sort());
    expect(table.map((r) => r.type).sort()).toEqual([...known].sort());
  });

  it('renders each row of the table as it is: status, body, constant headers', () => {
    for (const spec of table) {
      const r = inTemplate.find((g) => g.Properties.ResponseType === spec.type)!.Properties;
      expect(r.StatusCode, spec.type).toBe(String(spec.status));
      expect(JSON.parse(r.ResponseTemplates['application/json']!), spec.type).toEqual(spec.body);
      const headers = Object.fromEntries(
        Object.entries(r.ResponseParameters).map(([k, v]) => [
          k.replace('gatewayresponse.header.', ''),
          joined(v).replace(/^'|'$/g, ''),
        ]),
      );
      expect(headers, spec.type).toEqual({ 'Content-Type': 'application/json', ...spec.headers });
    }
  });

  it('answers with the status the error catalogue gives each code', () => {
    for (const spec of table)
      expect(spec.status, `${spec.type} ${spec.body.code}`).toBe(ERROR_CATALOGUE[spec.body.code].status);
  });

  it('says when to retry on every 429, 502 and 503, with RateLimit-* on the 429s', () => {
    const status = (type: string) => table.find((r) => r.type === type)!;
    for (const type of ['THROTTLED', 'QUOTA_EXCEEDED']) {
      expect(status(type)).toMatchObject({
        status: 429,
        headers: { 'Retry-After': '1', 'RateLimit-Limit': '45', 'RateLimit-Remaining': '0', 'RateLimit-Reset': '1' },
      });
    }
    expect(status('UNSUPPORTED_MEDIA_TYPE').status).toBe(415);
    expect(status('INTEGRATION_TIMEOUT').status).toBe(504);
    expect(status('INTEGRATION_FAILURE')).toMatchObject({ status: 502, headers: { 'Retry-After': '1' } });
    expect(status('AUTHORIZER_FAILURE')).toMatchObject({ status: 503, headers: { 'Retry-After': '1' } });
  });

  it('names the stage URL of the protected-resource metadata on every 401, invalid_token on the Deny', () => {
    const header = (type: string) => {
      const r = inTemplate.find((g) => g.Properties.ResponseType === type)!.Properties;
      return joined(r.ResponseParameters['gatewayresponse.header.WWW-Authenticate']).replace(/^'|'$/g, '');
    };
    const url = metadataUrl;
    expect(url).toMatch(/^https:\/\/\{IntegrationApi\w+\}\.execute-api\./);
    expect(header('UNAUTHORIZED')).toBe(`Bearer resource_metadata="${url}"`);
    expect(header('ACCESS_DENIED')).toBe(`Bearer resource_metadata="${url}", error="invalid_token"`);
    for (const type of ['INVALID_API_KEY', 'INVALID_SIGNATURE', 'EXPIRED_TOKEN'])
      expect(header(type)).toBe(bearerChallenge(url));
    for (const spec of table.filter((r) => r.status === 401))
      expect(spec.headers['WWW-Authenticate'], spec.type).toMatch(/^Bearer resource_metadata="/);
    expect(invalidTokenChallenge(url)).toBe(header('ACCESS_DENIED'));
  });

  it('docs/gateway.md holds the table generated from the same data (npx tsx infra/gateway-docs.ts)', () => {
    const doc = readFileSync(GATEWAY_DOC, 'utf8');
    expect(doc).toBe(renderGatewayDoc(doc));
    expect(doc).toContain(`RateLimit-Limit: ${DEFAULT_SETTINGS.rateLimitPerMinute}`);
  });
});

/**
 * A Lambda proxy integration that fails, in AWS: its INTEGRATION_FAILURE gateway response, with
 * 502 from the function's side (an error, a crash, its own timeout, an oversized result) and 500
 * when Lambda refuses the invocation, unless the response sets a StatusCode; the 29 s integration
 * timeout is INTEGRATION_TIMEOUT (shared/http/gateway-responses.ts, functionFailed, has the
 * sources). The template's answers for them, and the rehearsal's gateway (emulation/rehearsal)
 * rendering them from this template, as a client of the deployed API gets them.
 */
describe('the gateway when a function fails', () => {
  const resources = (type: string) =>
    Object.values(template.findResources(type)) as { Properties: Record<string, unknown> }[];
  const responses = new Map(
    resources('AWS::ApiGateway::GatewayResponse').map(({ Properties: p }) => [
      String(p.ResponseType),
      gatewayResponseOf({
        ...p,
        ResponseParameters: Object.fromEntries(
          Object.entries(p.ResponseParameters as Record<string, unknown>).map(([k, v]) => [k, joined(v)]),
        ),
      } as never),
    ]),
  );
  const INTEGRATION_TIMEOUT_MS = 200;
  const model: ApiModel = {
    restApiId: 'api',
    stage: 'prod',
    responses,
    binaryMediaTypes: [],
    webAcl: undefined,
    accessLog: undefined,
    methods: [
      {
        resourcePath: '/fails/{how}',
        httpMethod: 'GET',
        authorizationType: 'NONE',
        authorizer: undefined,
        functionArn: 'arn:aws:lambda:local:000000000000:function:failing',
        integration: {
          type: 'AWS_PROXY',
          timeoutMs: INTEGRATION_TIMEOUT_MS,
          contentHandling: undefined,
          requestTemplates: {},
          responses: [],
        },
      },
    ],
  };
  /** The function as Lambda runs it (emulation/rehearsal/sandbox.ts): how it fails is the path's last part. */
  const invoke: Invoke = async (_arn, event) => {
    const how = (event as { pathParameters: { how: string } }).pathParameters.how;
    if (how === 'throws') throw new LambdaError('Error', 'boom');
    if (how === 'out-of-memory')
      throw new LambdaError('Runtime.ExitError', 'the execution environment exited (out of memory?)');
    if (how === 'own-timeout') throw new LambdaError('Sandbox.Timedout', 'Task timed out after 10.00 seconds');
    if (how === 'refused') throw new Error('TooManyRequestsException: Rate Exceeded.');
    if (how === 'oversized') return { statusCode: 200, body: 'x'.repeat(7 * 1024 * 1024) };
    // 'no-answer': still running when the integration timeout passes.
    return new Promise((resolve) =>
      setTimeout(() => resolve({ statusCode: 200, body: '' }), 5 * INTEGRATION_TIMEOUT_MS),
    );
  };
  const server = createServer(createTemplateGateway(model, invoke));
  let base = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const answer = async (how: string) => {
    const res = await fetch(`${base}/fails/${how}`);
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
  };

  it('sets INTEGRATION_FAILURE to 502 bad_gateway with Retry-After, INTEGRATION_TIMEOUT to 504 gateway_timeout', () => {
    const of = (type: string) =>
      resources('AWS::ApiGateway::GatewayResponse').find((r) => r.Properties.ResponseType === type)!.Properties;
    expect(of('INTEGRATION_FAILURE')).toMatchObject({
      StatusCode: '502',
      ResponseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
    });
    expect(
      JSON.parse((of('INTEGRATION_FAILURE').ResponseTemplates as Record<string, string>)['application/json']!),
    ).toEqual({
      code: 'bad_gateway',
      message: expect.any(String),
      field: null,
    });
    expect(of('INTEGRATION_TIMEOUT')).toMatchObject({ StatusCode: '504' });
  });

  it("stops every API function on its own timeout before the integration's, so a slow function is a failure, not a 504", () => {
    const functions = template.findResources('AWS::Lambda::Function');
    const methods = resources('AWS::ApiGateway::Method').filter(
      (m) => (m.Properties.Integration as { Type?: string } | undefined)?.Type === 'AWS_PROXY',
    );
    expect(methods.length).toBeGreaterThan(5);
    for (const { Properties: p } of methods) {
      const integration = p.Integration as { Uri: unknown; TimeoutInMillis?: number };
      const [fn] = /"Fn::GetAtt":\["(\w+)","Arn"\]/.exec(JSON.stringify(integration.Uri))?.slice(1) ?? [];
      const timeoutS = Number(functions[fn!]?.Properties.Timeout);
      expect(timeoutS, `${fn} of ${p.HttpMethod} ${String(p.ResourceId)}`).toBeGreaterThan(0);
      expect(timeoutS * 1000).toBeLessThan(integration.TimeoutInMillis ?? 29_000);
    }
  });

  it('answers a function that threw, ran out of memory, timed out or returned over 6 MB: 502 bad_gateway', async () => {
    for (const how of ['throws', 'out-of-memory', 'own-timeout', 'oversized']) {
      expect(await answer(how), how).toEqual({
        status: 502,
        retryAfter: '1',
        body: functionFailed().body,
      });
    }
  });

  it('answers an invocation Lambda refused with the same 502 (the template sets it for every cause)', async () => {
    expect(await answer('refused')).toEqual({ status: 502, retryAfter: '1', body: functionFailed().body });
  });

  it('answers no answer within the integration timeout: 504 gateway_timeout', async () => {
    const res = await answer('no-answer');
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ code: 'gateway_timeout', field: null });
  });
});
