import { describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { StatefulStack } from '#infra/stateful-stack.ts';
import { ApiStack } from '#infra/api-stack.ts';
import { settingsFromContext } from '#infra/settings.ts';
import { API_ROUTES, groups, OAUTH_ROUTES, principalToContext } from '#http/api-routes.ts';
import { TABLE } from '#db/core/table.ts';
import { actionsOf, joined, logicalId, statementsOf, synthStacks } from './synth.ts';
import { MIN_COMPRESSION_BYTES } from '#http/compression.ts';

describe('CDK stacks', () => {
  const { stateful, api, data, template } = synthStacks();

  it('keeps the table, with stream, TTL, point-in-time recovery and deletion protection, retained', () => {
    data.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: TABLE.partitionKey, KeyType: 'HASH' },
        { AttributeName: TABLE.sortKey, KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: TABLE.ttlAttribute, Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
    });
    data.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
  });

  it('projects into gsi1 only what its queries read, and no webhook secret', () => {
    data.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: [
        Match.objectLike({
          IndexName: TABLE.gsi1.indexName,
          Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: [...TABLE.gsi1.projectedAttributes] },
        }),
      ],
    });
    expect(TABLE.gsi1.projectedAttributes).not.toContain('webhook_secret');
    expect(TABLE.gsi1.projectedAttributes).not.toContain('previous_webhook_secret');
  });

  it('puts the queues in the stateful stack, all retained, and none in the API stack', () => {
    // The webhook lanes (fast, slow), their dead-letter queue, the stream-failure queue, the express queue.
    expect(Object.keys(data.findResources('AWS::SQS::Queue'))).toHaveLength(5);
    for (const q of Object.values(data.findResources('AWS::SQS::Queue'))) {
      expect(q.DeletionPolicy).toBe('Retain');
      expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    }
    template.resourceCountIs('AWS::SQS::Queue', 0);
  });

  it('keeps the webhook secrets key in the stateful stack, rotated and retained', () => {
    data.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ EnableKeyRotation: true }),
    });
    template.resourceCountIs('AWS::KMS::Key', 0);
  });

  it('lets only the admin function encrypt, and only the signer and the admin (webhooks ping) decrypt, both told the key', () => {
    const keyArn = { 'Fn::ImportValue': Match.stringLikeRegexp('WebhookSecretsKey') };
    const kmsOf = (fn: Parameters<typeof statementsOf>[1]) => actionsOf(statementsOf(template, fn), 'kms');
    expect(kmsOf(api.adminFunction)).toEqual(['kms:Decrypt', 'kms:Encrypt']);
    expect(kmsOf(api.webhooks.webhooksFunction)).toEqual(['kms:Decrypt']);
    const others = [
      api.authorizerFunction,
      ...Object.values(api.functions),
      api.webhooks.eventsFunction,
      api.webhooks.deadLetterFunction,
      api.nameIndexer.function,
    ];
    for (const fn of others) expect(kmsOf(fn)).toEqual([]);
    for (const fn of [api.adminFunction, api.webhooks.webhooksFunction]) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Description: (fn.node.defaultChild as unknown as { description: string }).description,
        Environment: { Variables: Match.objectLike({ WEBHOOK_SECRET_KMS_KEY_ID: keyArn }) },
      });
    }
  });

  it('lets only the admin function query the access log group (keys requests), and nothing else of the logs', () => {
    const accessLogs = Object.keys(template.findResources('AWS::Logs::LogGroup')).find((id) =>
      id.startsWith('AccessLogs'),
    )!;
    const logsOf = (fn: Parameters<typeof statementsOf>[1]) =>
      statementsOf(template, fn).filter((s) => [s.Action].flat().some((a) => a.startsWith('logs:')));
    expect(logsOf(api.adminFunction).map((s) => [s.Action, s.Resource])).toEqual([
      ['logs:StartQuery', { 'Fn::GetAtt': [accessLogs, 'Arn'] }],
      ['logs:GetQueryResults', '*'],
    ]);
    const others = [
      api.authorizerFunction,
      ...Object.values(api.functions),
      api.webhooks.webhooksFunction,
      api.webhooks.eventsFunction,
      api.webhooks.deadLetterFunction,
      api.nameIndexer.function,
    ];
    for (const fn of others) expect(logsOf(fn)).toEqual([]);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Description: (api.adminFunction.node.defaultChild as unknown as { description: string }).description,
      Environment: { Variables: Match.objectLike({ ACCESS_LOG_GROUP: { Ref: accessLogs } }) },
    });
  });

  it('puts the Lambda authorizer on every method of the route table, with caching off', () => {
    const methods = template.findResources('AWS::ApiGateway::Method');
    const keyed = Object.values(methods).filter((m) => !['OPTIONS', 'ANY'].includes(m.Properties.HttpMethod));
    // The public methods: the OpenAPI document, from its own small function (a MOCK fails under
    // binaryMediaTypes */*), and the OAuth endpoints (docs/oauth.md), HEAD beside each GET.
    const open = keyed.filter((m) => m.Properties.AuthorizationType === 'NONE');
    expect(
      open.map((m) => [m.Properties.HttpMethod, m.Properties.OperationName, m.Properties.Integration.Type]),
    ).toEqual([
      ['GET', 'getOpenApiDocument', 'AWS_PROXY'],
      ['HEAD', 'getOpenApiDocumentHead', 'AWS_PROXY'],
      ...OAUTH_ROUTES.flatMap((r) => [
        [r.method, r.operation, 'AWS_PROXY'],
        ...(r.method === 'GET' ? [['HEAD', `${r.operation}Head`, 'AWS_PROXY']] : []),
      ]),
    ]);
    const routed = keyed.filter((m) => m.Properties.AuthorizationType !== 'NONE');
    const gets = API_ROUTES.filter((r) => r.method === 'GET').length;
    expect(routed).toHaveLength(API_ROUTES.length + gets); // HEAD beside every GET
    for (const m of routed) {
      expect(m.Properties.AuthorizationType).toBe('CUSTOM');
      expect(m.Properties.AuthorizerId).toBeDefined();
    }
    template.hasResourceProperties('AWS::ApiGateway::Authorizer', {
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 0,
    });
  });

  it('refuses a non-zero authorizer cache at synth, naming why', () => {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const data = new StatefulStack(app, 'Data');
    expect(() => new ApiStack(app, 'Api', { data, authorizerCacheSeconds: 300 })).toThrow(
      /authorizerCacheSeconds must be 0, got 300: .*covers one method/,
    );
    const ctx = new App({ context: { authorizerCacheSeconds: '60' } });
    expect(() => settingsFromContext(ctx.node)).toThrow(/authorizerCacheSeconds must be 0/);
  });

  it('creates one Lambda per endpoint group plus the authorizer, admin, fan-out, signer, dead-letter consumer, name indexer and OAuth endpoints, all traced', () => {
    const fns = Object.values(template.findResources('AWS::Lambda::Function')).filter((f) =>
      f.Properties.Runtime?.startsWith('nodejs'),
    );
    expect(fns).toHaveLength(groups().length + 8); // + the OpenAPI document's
    for (const f of fns) {
      expect(f.Properties.Architectures).toEqual(['arm64']);
      expect(f.Properties.TracingConfig).toEqual({ Mode: 'Active' });
      // Every function but the OpenAPI document's reads the table.
      if (!/OpenAPI/.test(f.Properties.Description))
        expect(f.Properties.Environment.Variables.TABLE_NAME).toBeDefined();
      expect(f.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME).toBeDefined();
    }
  });

  it('reserves concurrency for the authorizer and the signer within a default account, and caps the signer poller to it', () => {
    const reserved = (fn: object) =>
      (fn as { node: { defaultChild: { reservedConcurrentExecutions?: number } } }).node.defaultChild
        .reservedConcurrentExecutions;
    expect(reserved(api.authorizerFunction)).toBe(100);
    expect(reserved(api.webhooks.webhooksFunction)).toBe(50);
    expect(100 + 50).toBeLessThanOrEqual(1000 - 100);
    // Its two lanes' mappings together poll with exactly the reservation (test/infra/webhook-pipeline.test.ts).
    const signerMappings = template.findResources('AWS::Lambda::EventSourceMapping', {
      Properties: { FunctionName: { Ref: logicalId(api.webhooks.webhooksFunction) } },
    });
    const pollers = Object.values(signerMappings).map((m) => m.Properties.ScalingConfig.MaximumConcurrency as number);
    expect(pollers.reduce((a, b) => a + b, 0)).toBe(50);
    const ctx = (c: Record<string, string>) => settingsFromContext(new App({ context: c }).node);
    expect(ctx({ authorizerConcurrency: '300', signerConcurrency: '20' })).toMatchObject({
      authorizerConcurrency: 300,
      signerConcurrency: 20,
    });
    expect(() => ctx({ authorizerConcurrency: '850', signerConcurrency: '60' })).toThrow(
      /leaves less than 100 .* unreserved/,
    );
    expect(() => ctx({ signerConcurrency: '1' })).toThrow(/signerConcurrency must be 0/);
  });

  it('traces the stage and writes JSON access logs with the key and store the authorizer resolved', () => {
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0]!.Properties;
    expect(stage.TracingEnabled).toBe(true);
    const format = JSON.parse(stage.AccessLogSetting.Format as string) as Record<string, string>;
    // The context keys the variables read are the ones the authorizer hands over.
    const context = principalToContext(
      { keyId: 7, storeId: 'acme', abilities: [], currency: null },
      { allowed: true, limit: 60, remaining: 59, resetSeconds: 60 },
      null,
    );
    expect(format.key_id).toBe('$context.authorizer.keyId');
    expect(format.store_id).toBe('$context.authorizer.storeId');
    expect(Object.keys(context)).toEqual(expect.arrayContaining(['keyId', 'storeId']));
    expect(format).toMatchObject({
      request_id: '$context.requestId',
      status: '$context.status',
      latency_ms: '$context.responseLatency',
    });
    expect(JSON.stringify(format)).not.toMatch(/Authorization|header/i);
    // Per-method metrics are off by default: ~7 custom metrics per method, each $0.30 a month (docs/performance.md).
    expect(stage.MethodSettings).toEqual([
      expect.objectContaining({ LoggingLevel: 'ERROR', DataTraceEnabled: false, MetricsEnabled: false }),
    ]);
  });

  it('gzips answers of 1 KB and more for clients that accept it', () => {
    const api = Object.values(template.findResources('AWS::ApiGateway::RestApi'))[0]!.Properties;
    expect(api.MinimumCompressionSize).toBe(MIN_COMPRESSION_BYTES);
  });

  it('logs no Lambda platform start and report lines (every byte is billed)', () => {
    const functions = Object.values(template.findResources('AWS::Lambda::Function')).map(
      (f) => f.Properties.LoggingConfig,
    );
    expect(functions.length).toBeGreaterThan(5);
    for (const config of functions) expect(config).toMatchObject({ LogFormat: 'JSON', SystemLogLevel: 'WARN' });
  });

  it('turns per-method metrics on only when a deployment asks (detailedMetrics)', () => {
    const { template: detailed } = synthStacks({ detailedMetrics: true });
    const stage = Object.values(detailed.findResources('AWS::ApiGateway::Stage'))[0]!.Properties;
    expect(stage.MethodSettings).toEqual([expect.objectContaining({ MetricsEnabled: true })]);
  });

  it('owns the account-level API Gateway CloudWatch role and keeps it on delete', () => {
    template.resourceCountIs('AWS::ApiGateway::Account', 1);
    template.hasResource('AWS::IAM::Role', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        AssumeRolePolicyDocument: Match.objectLike({
          Statement: [Match.objectLike({ Principal: { Service: 'apigateway.amazonaws.com' } })],
        }),
      }),
    });
  });

  it('keeps API Gateway errors in the contract shape', () => {
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'UNAUTHORIZED',
      StatusCode: '401',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"code":"unauthenticated"') },
    });
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'ACCESS_DENIED',
      StatusCode: '401',
      ResponseTemplates: { 'application/json': Match.stringLikeRegexp('"code":"unauthenticated"') },
    });
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'MISSING_AUTHENTICATION_TOKEN',
      StatusCode: '404',
    });
    template.hasResourceProperties('AWS::ApiGateway::GatewayResponse', {
      ResponseType: 'DEFAULT_5XX',
      StatusCode: '500',
    });
  });

  it('challenges every gateway 401 with WWW-Authenticate: Bearer, naming the resource metadata', () => {
    const unauthorized = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')).filter(
      (r) => r.Properties.ResponseType === 'UNAUTHORIZED',
    );
    expect(unauthorized).toHaveLength(1);
    // The literal CloudFormation builds (test/infra/gateway-responses.test.ts checks the whole URL).
    expect(joined(unauthorized[0]!.Properties.ResponseParameters['gatewayresponse.header.WWW-Authenticate'])).toMatch(
      /^'Bearer resource_metadata="https:\/\//,
    );
  });

  it('hands every request body to the Lambdas as its bytes (invalid UTF-8 stays detectable)', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { BinaryMediaTypes: ['*/*'] });
  });

  it('answers unknown methods of every known path through an ANY method without the authorizer (405 in the handler)', () => {
    const any = Object.values(template.findResources('AWS::ApiGateway::Method')).filter(
      (m) => m.Properties.HttpMethod === 'ANY',
    );
    // + /openapi.json's and the OAuth paths' (their functions answer 405)
    expect(any).toHaveLength(
      new Set(API_ROUTES.map((r) => r.path)).size + 1 + new Set(OAUTH_ROUTES.map((r) => r.path)).size,
    );
    for (const m of any) expect(m.Properties.AuthorizationType).toBe('NONE');
  });

  it('has the web ACL by default', () => {
    template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    expect(stateful.table).toBeDefined();
  });
});

describe('CDK stacks with waf=true', () => {
  const { api, template } = synthStacks({ waf: true, wafPerIpPerMinute: 3000, wafPerKeyPerMinute: 600 });

  it('associates a web ACL with per-IP and per-Authorization-header rate rules with the stage', () => {
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      Rules: Match.arrayWith([
        Match.objectLike({
          Name: 'PerIp',
          Statement: { RateBasedStatement: { AggregateKeyType: 'IP', Limit: 3000, EvaluationWindowSec: 60 } },
        }),
        Match.objectLike({
          Name: 'PerAuthorizationHeader',
          Action: { Block: { CustomResponse: Match.objectLike({ ResponseCode: 429 }) } },
          Statement: {
            RateBasedStatement: Match.objectLike({
              AggregateKeyType: 'CUSTOM_KEYS',
              Limit: 600,
              CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
            }),
          },
        }),
      ]),
    });
    const stageId = logicalId(api.api.deploymentStage);
    template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
      ResourceArn: Match.objectLike({ 'Fn::Join': ['', Match.arrayWith([{ Ref: stageId }])] }),
      WebACLArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('RateLimitsWebAcl'), 'Arn'] },
    });
  });

  it('reads the WAF flag and limits from context', () => {
    const s = settingsFromContext(
      new App({ context: { waf: 'true', wafPerIpPerMinute: '1200', alarmEmail: 'ops@example.com' } }).node,
    );
    expect(s).toMatchObject({ waf: true, wafPerIpPerMinute: 1200, alarmEmail: 'ops@example.com' });
    expect(settingsFromContext(new App().node).waf).toBe(true);
    expect(settingsFromContext(new App({ context: { waf: 'false' } }).node).waf).toBe(false);
    expect(() => settingsFromContext(new App({ context: { alarmEmail: 'not-an-address' } }).node)).toThrow(
      /alarmEmail/,
    );
  });
});
