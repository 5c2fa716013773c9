import { describe, expect, it } from 'vitest';
import type { ApiIntegration, GatewayResponse } from '#emulation/rehearsal/api-model.ts';
import { DEFAULT_STATUS, renderGatewayResponse } from '#emulation/rehearsal/gateway-response.ts';
import { isBinary, renderVelocity, runMock } from '#emulation/rehearsal/mock-integration.ts';

/** The rehearsal's API Gateway rules that need no stack: gateway-response inheritance, binary media types, MOCK integrations. */
const entry = (
  statusCode: number | undefined,
  template: string,
  headers: Record<string, string> = {},
): GatewayResponse => ({ statusCode, template, headers });
const ctx = { requestId: 'r-1', authorizer: { missingAbility: 'catalog:write' } };

describe('rehearsal gateway responses', () => {
  const model = {
    responses: new Map([
      ['DEFAULT_4XX', entry(400, '{"code":"bad_request"}', { 'X-From': '4xx' })],
      ['DEFAULT_5XX', entry(500, '{"code":"internal_error"}')],
      ['THROTTLED', entry(429, '{"code":"rate_limited"}', { 'Retry-After': '1' })],
      ['ACCESS_DENIED', entry(undefined, '{"code":"forbidden","ability":"$context.authorizer.missingAbility"}')],
    ]),
  };

  it('a 4xx type without its own entry inherits DEFAULT_4XX: status, template and headers', () => {
    for (const type of ['QUOTA_EXCEEDED', 'UNSUPPORTED_MEDIA_TYPE', 'INVALID_API_KEY', 'BAD_REQUEST_BODY']) {
      expect(renderGatewayResponse(model, type, ctx)).toEqual({
        status: 400,
        headers: { 'Content-Type': 'application/json', 'X-From': '4xx' },
        body: '{"code":"bad_request"}',
      });
    }
  });

  it('a 5xx type without its own entry inherits DEFAULT_5XX, status included', () => {
    expect(renderGatewayResponse(model, 'INTEGRATION_TIMEOUT', ctx)).toMatchObject({
      status: 500,
      body: '{"code":"internal_error"}',
    });
    expect(renderGatewayResponse(model, 'API_CONFIGURATION_ERROR', ctx).status).toBe(500);
  });

  it("a type with its own entry keeps it; without a StatusCode there, the type's default status", () => {
    expect(renderGatewayResponse(model, 'THROTTLED', ctx)).toMatchObject({
      status: 429,
      headers: { 'Retry-After': '1' },
    });
    expect(renderGatewayResponse(model, 'ACCESS_DENIED', ctx)).toEqual({
      status: 403,
      headers: { 'Content-Type': 'application/json' },
      body: '{"code":"forbidden","ability":"catalog:write"}',
    });
  });

  it("without DEFAULT_xXX StatusCodes, each type answers its default status with API Gateway's message", () => {
    const bare = { responses: new Map<string, GatewayResponse>() };
    for (const [type, status] of Object.entries(DEFAULT_STATUS))
      expect(renderGatewayResponse(bare, type, ctx).status).toBe(status);
    expect(JSON.parse(renderGatewayResponse(bare, 'MISSING_AUTHENTICATION_TOKEN', ctx).body)).toEqual({
      message: 'Missing Authentication Token',
    });
    expect(renderGatewayResponse(bare, 'DEFAULT_5XX', ctx, 502)).toMatchObject({
      status: 502,
      body: '{"message":"Internal server error"}',
    });
  });

  it("answers a failed Lambda's INTEGRATION_FAILURE with the cause's status, not the table's 504, unless a StatusCode is set", () => {
    const bare = { responses: new Map<string, GatewayResponse>() };
    expect(renderGatewayResponse(bare, 'INTEGRATION_FAILURE', ctx, 502)).toEqual({
      status: 502,
      headers: { 'Content-Type': 'application/json' },
      body: '{"message":"Internal server error"}',
    });
    expect(renderGatewayResponse(bare, 'INTEGRATION_FAILURE', ctx, 500).status).toBe(500);
    // Without an entry of its own it inherits DEFAULT_5XX, whose StatusCode then wins.
    expect(renderGatewayResponse(model, 'INTEGRATION_FAILURE', ctx, 502)).toMatchObject({
      status: 500,
      body: '{"code":"internal_error"}',
    });
    const own = { responses: new Map([['INTEGRATION_FAILURE', entry(502, '{"code":"bad_gateway"}')]]) };
    expect(renderGatewayResponse(own, 'INTEGRATION_FAILURE', ctx, 500).status).toBe(502);
  });
});

describe('rehearsal binary media types and MOCK integrations', () => {
  const mock = (contentHandling?: string): ApiIntegration => ({
    type: 'MOCK',
    timeoutMs: 29_000,
    contentHandling,
    requestTemplates: { 'application/json': '{"statusCode": 200}' },
    responses: [
      {
        statusCode: '200',
        selectionPattern: undefined,
        contentHandling: undefined,
        templates: {
          'application/json': '#[[{"$ref":"#/x","url":"]]#https://$context.domainName/$context.stage#[["}]]#',
        },
        parameters: { 'method.response.header.Cache-Control': "'max-age=60'" },
      },
    ],
  });
  const vars = { context: { domainName: 'api.example', stage: 'prod' }, stageVariables: {} };

  it('matches media types with wildcards, ignoring parameters', () => {
    expect(isBinary(['*/*'], 'application/json; charset=utf-8')).toBe(true);
    expect(isBinary(['image/*'], 'image/png')).toBe(true);
    expect(isBinary(['image/*'], 'application/json')).toBe(false);
    expect(isBinary([], 'application/json')).toBe(false);
  });

  it('renders unparsed blocks literally and context references outside them', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Velocity template, not a JS template
    expect(renderVelocity('#[[$ref]]#$context.stage/${context.domainName}', vars)).toBe('$refprod/api.example');
  });

  it('answers a MOCK method from its templates when no binary media type matches', () => {
    expect(runMock(mock(), { contentType: undefined, binaryMediaTypes: [] }, vars)).toEqual({
      ok: true,
      status: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=60' },
      body: '{"$ref":"#/x","url":"https://api.example/prod"}',
    });
  });

  it('fails a MOCK method under */* without contentHandling (no request template runs), as API Gateway does', () => {
    expect(runMock(mock(), { contentType: undefined, binaryMediaTypes: ['*/*'] }, vars)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('binary'),
    });
    expect(runMock(mock('CONVERT_TO_TEXT'), { contentType: undefined, binaryMediaTypes: ['*/*'] }, vars)).toMatchObject(
      { ok: true, status: 200 },
    );
  });
});
