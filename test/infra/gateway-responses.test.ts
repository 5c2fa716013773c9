import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import { bearerChallenge, gatewayResponseTable, invalidTokenChallenge } from '#http/gateway-responses.ts';
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
describe('gateway responses', () => {
  const { api, template } = synthStacks({ rateLimitPerMinute: 45 });
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
