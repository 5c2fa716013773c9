import { describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { StatefulStack } from '../../infra/stateful-stack.ts';
import { ApiStack } from '../../infra/api-stack.ts';
import { API_ROUTES, groups } from '../../shared/http/api-routes.ts';
import { TABLE } from '../../shared/db/table.ts';

function synth() {
  // Skip esbuild bundling: these tests look at the templates, not the bundles.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stateful = new StatefulStack(app, 'Data');
  const api = new ApiStack(app, 'Api', { table: stateful.table, authorizerCacheSeconds: 0 });
  return { data: Template.fromStack(stateful), api: Template.fromStack(api) };
}

describe('CDK stacks', () => {
  const { data, api } = synth();

  it('defines the table from the shared table module, with stream, TTL and point-in-time recovery', () => {
    data.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: TABLE.gsi1.indexName })],
    });
    data.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });

  it('puts the Lambda authorizer on every method of the route table, with caching off', () => {
    const methods = api.findResources('AWS::ApiGateway::Method');
    const keyed = Object.values(methods).filter((m) => !['OPTIONS', 'ANY'].includes(m.Properties.HttpMethod));
    // The one public method: the OpenAPI document, answered by API Gateway itself.
    const open = keyed.filter((m) => m.Properties.AuthorizationType === 'NONE');
    expect(open.map((m) => [m.Properties.HttpMethod, m.Properties.OperationName, m.Properties.Integration.Type])).toEqual([['GET', 'getOpenApiDocument', 'MOCK']]);
    const routed = keyed.filter((m) => m.Properties.AuthorizationType !== 'NONE');
    const gets = API_ROUTES.filter((r) => r.method === 'GET').length;
    expect(routed).toHaveLength(API_ROUTES.length + gets); // HEAD beside every GET
    for (const m of routed) {
      expect(m.Properties.AuthorizationType).toBe('CUSTOM');
      expect(m.Properties.AuthorizerId).toBeDefined();
    }
    api.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 0,
    });
  });

  it('creates one Lambda per endpoint group plus the authorizer, admin, fan-out and signer functions', () => {
    const fns = Object.values(api.findResources('AWS::Lambda::Function')).filter((f) => f.Properties.Runtime?.startsWith('nodejs'));
    expect(fns).toHaveLength(groups().length + 4);
    for (const f of fns) {
      expect(f.Properties.Architectures).toEqual(['arm64']);
      expect(f.Properties.Environment.Variables.TABLE_NAME).toBeDefined();
    }
  });

  it('grants the read-only catalog group no write actions', () => {
    const policies = api.findResources('AWS::IAM::Policy');
    const products = Object.entries(policies).find(([id]) => id.startsWith('ProductsFunction'));
    expect(products).toBeDefined();
    const actions = JSON.stringify(products![1].Properties.PolicyDocument.Statement);
    expect(actions).toContain('dynamodb:GetItem');
    expect(actions).not.toMatch(/PutItem|UpdateItem|DeleteItem|BatchWriteItem/);
  });

  it('keeps API Gateway errors in the contract shape', () => {
    api.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED',
      StatusCode: '401',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"code":"unauthenticated"') },
    });
    api.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'ACCESS_DENIED',
      StatusCode: '403',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('\\$context.authorizer.missingAbility') },
    });
    api.hasResourceProperties('AWS::ApiGateway::GatewayResponse', { ResponseType: 'MISSING_AUTHENTICATION_TOKEN', StatusCode: '404' });
    api.hasResourceProperties('AWS::ApiGateway::GatewayResponse', { ResponseType: 'DEFAULT_5XX', StatusCode: '500' });
  });

  it('challenges every gateway 401 with WWW-Authenticate: Bearer', () => {
    api.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED',
      ResponseParameters: Match.objectLike({ 'gatewayresponse.header.WWW-Authenticate': "'Bearer'" }),
    });
  });

  it('hands every request body to the Lambdas as its bytes (invalid UTF-8 stays detectable)', () => {
    api.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['*/*'] });
  });

  it('answers unknown methods of every known path through an ANY method without the authorizer (405 in the handler)', () => {
    const any = Object.values(api.findResources('AWS::ApiGateway::Method')).filter((m) => m.Properties.HttpMethod === 'ANY');
    expect(any).toHaveLength(new Set(API_ROUTES.map((r) => r.path)).size);
    for (const m of any) expect(m.Properties.AuthorizationType).toBe('NONE');
  });
});
