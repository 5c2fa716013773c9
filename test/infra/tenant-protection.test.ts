import { describe, expect, it } from 'vitest';
import { App } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { capacityModel, capacityRefusal } from '#infra/capacity.ts';
import { TOO_LARGE_CONTENT_LENGTH, WELL_FORMED_AUTHORIZATION } from '#infra/constructs/rate-limit-web-acl.ts';
import { DEFAULT_SETTINGS, settingsFromContext } from '#infra/settings.ts';
import { GATEWAY_METRICS, METRICS_NAMESPACE } from '#infra/metric-names.ts';
import { generateToken } from '#domain/key/api-key.ts';
import { bearerToken } from '#http/bearer.ts';
import { generateAccessToken } from '#domain/oauth/oauth.ts';
import { invalidTokenChallenge } from '#http/gateway-responses.ts';
import { deployedMetadataUrl, joined, logicalId, synthStacks } from './synth.ts';

type Rule = {
  Name: string;
  Priority: number;
  Action: {
    Block?: {
      CustomResponse: {
        ResponseCode: number;
        CustomResponseBodyKey: string;
        ResponseHeaders?: { Name: string; Value: unknown }[];
      };
    };
  };
  Statement: Record<string, any>;
  VisibilityConfig: { SampledRequestsEnabled: boolean; CloudWatchMetricsEnabled: boolean };
};

/** Per-tenant protection at the gateway, with nothing set but the defaults (docs/deploy.md). */
describe('per-tenant protection (default settings)', () => {
  const { api, template } = synthStacks();
  const acl = Object.values(template.findResources('AWS::WAFv2::WebACL'))[0]!.Properties as {
    Rules: Rule[];
    VisibilityConfig: { SampledRequestsEnabled: boolean };
    CustomResponseBodies: Record<string, { Content: string }>;
  };
  const rule = (name: string) => acl.Rules.find((r) => r.Name === name)!;

  it('puts the web ACL on the stage by default, with sampled requests off everywhere (a sample shows the bearer token)', () => {
    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    expect(acl.VisibilityConfig.SampledRequestsEnabled).toBe(false);
    expect(
      acl.Rules.map((r) => [
        r.Name,
        r.VisibilityConfig.SampledRequestsEnabled,
        r.VisibilityConfig.CloudWatchMetricsEnabled,
      ]),
    ).toEqual([
      ['MalformedAuthorization', false, true],
      ['BodyTooLarge', false, true],
      ['PerIp', false, true],
      ['PerAuthorizationHeader', false, true],
    ]);
  });

  it('limits each key (Authorization value) to twice its allowance, each IP as configured', () => {
    const perKey = rule('PerAuthorizationHeader');
    expect(perKey.Statement.RateBasedStatement).toMatchObject({
      Limit: 2 * DEFAULT_SETTINGS.rateLimitPerMinute,
      EvaluationWindowSec: 60,
      AggregateKeyType: 'CUSTOM_KEYS',
    });
    expect(perKey.Statement.RateBasedStatement.CustomKeys).toEqual([
      { Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } },
    ]);
    expect(perKey.Action.Block!.CustomResponse).toMatchObject({
      ResponseCode: 429,
      ResponseHeaders: [{ Name: 'Retry-After', Value: '60' }],
    });
    expect(rule('PerIp').Statement.RateBasedStatement).toMatchObject({
      Limit: DEFAULT_SETTINGS.wafPerIpPerMinute,
      AggregateKeyType: 'IP',
    });
  });

  it('refuses a present but malformed Authorization header with 401 before any Lambda runs', () => {
    const malformed = rule('MalformedAuthorization');
    expect(malformed.Priority).toBe(0);
    const { ResponseCode, ResponseHeaders } = malformed.Action.Block!.CustomResponse;
    expect(ResponseCode).toBe(401);
    expect(ResponseHeaders!.map((h) => [h.Name, joined(h.Value)])).toEqual([
      ['WWW-Authenticate', invalidTokenChallenge(deployedMetadataUrl(api))],
    ]);
    // WAF refuses a header value over 255 characters; the placeholders stand for at most a 10-character
    // API id, a 14-character region and a 16-character URL suffix (amazonaws.com.cn).
    const filled = joined(ResponseHeaders![0]!.Value)
      .replace(/\{IntegrationApi\w+\}/, 'x'.repeat(10))
      .replace('{AWS::Region}', 'x'.repeat(14))
      .replace('{AWS::URLSuffix}', 'x'.repeat(16));
    expect(filled.length).toBeLessThanOrEqual(255);
    expect(
      JSON.parse(acl.CustomResponseBodies[malformed.Action.Block!.CustomResponse.CustomResponseBodyKey]!.Content).code,
    ).toBe('unauthenticated');
    const [present, notWellFormed] = malformed.Statement.AndStatement.Statements;
    expect(present.SizeConstraintStatement).toMatchObject({
      FieldToMatch: { SingleHeader: { Name: 'authorization' } },
      ComparisonOperator: 'GT',
      Size: 0,
    });
    expect(notWellFormed.NotStatement.Statement.RegexMatchStatement).toMatchObject({
      FieldToMatch: { SingleHeader: { Name: 'authorization' } },
      RegexString: WELL_FORMED_AUTHORIZATION,
    });
  });

  it('lets through exactly the headers the authorizer reads a token from (the regex WAF runs, checked here with JS)', () => {
    const wellFormed = new RegExp(WELL_FORMED_AUTHORIZATION);
    const token = generateToken();
    const accessToken = generateAccessToken();
    for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER\t${token} `, `Bearer ${accessToken}`]) {
      const expected = header.includes(accessToken) ? accessToken : token;
      expect(wellFormed.test(header), header).toBe(true);
      expect(bearerToken({ Authorization: header }), header).toBe(expected);
    }
    for (const header of [
      'Bearer',
      `Basic ${token}`,
      `Bearer ${token.slice(0, -1)}`,
      `Bearer ${token}x`,
      `Bearer sia_${'!'.repeat(43)}`,
      `Bearer ${token} ${token}`,
      token,
    ]) {
      expect(wellFormed.test(header), header).toBe(false);
    }
  });

  it('refuses a token that is no key at the gateway: the authorizer guards every group method, and its Deny is a 401', () => {
    const denied = Object.values(template.findResources('AWS::ApiGateway::GatewayResponse')).find(
      (r) => r.Properties.ResponseType === 'ACCESS_DENIED',
    )!.Properties;
    expect(denied.StatusCode).toBe('401');
    expect(joined(denied.ResponseParameters['gatewayresponse.header.WWW-Authenticate'])).toBe(
      `'${invalidTokenChallenge(deployedMetadataUrl(api))}'`,
    );
    expect(JSON.parse(denied.ResponseTemplates['application/json']).code).toBe('unauthenticated');
    const authorizers = Object.entries(template.findResources('AWS::ApiGateway::Authorizer'));
    expect(authorizers).toHaveLength(1);
    const [authorizerId, authorizer] = authorizers[0]!;
    // A missing header is refused before the authorizer runs; no cached Allow outlives a revocation.
    expect(authorizer.Properties).toMatchObject({
      Type: 'REQUEST',
      IdentitySource: 'method.request.header.Authorization',
      AuthorizerResultTtlInSeconds: 0,
    });
    const groupFunctions = /^(Products|Catalog|Orders|Content|Mcp)Function/;
    const groupMethods = Object.values(template.findResources('AWS::ApiGateway::Method')).filter((m) =>
      groupFunctions.test(
        JSON.stringify(m.Properties.Integration?.Uri ?? '').match(/"([A-Za-z]+Function[A-F0-9]{8})"/)?.[1] ?? '',
      ),
    );
    expect(groupMethods.length).toBeGreaterThan(10);
    for (const m of groupMethods.filter((m) => m.Properties.HttpMethod !== 'ANY')) {
      expect(m.Properties, `${m.Properties.HttpMethod} ${JSON.stringify(m.Properties.ResourceId)}`).toMatchObject({
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
      });
    }
  });

  it('answers 413 for a Content-Length from 4,000,000 bytes (base64 of it would not fit a Lambda request)', () => {
    const tooLarge = new RegExp(TOO_LARGE_CONTENT_LENGTH);
    expect(['4000000', '5242880', '10485760', '99999999999', '004000000'].every((v) => tooLarge.test(v))).toBe(true);
    expect(['0', '1048576', '3999999', '', 'abc'].some((v) => tooLarge.test(v))).toBe(false);
    expect(rule('BodyTooLarge').Action.Block!.CustomResponse).toEqual({
      ResponseCode: 413,
      CustomResponseBodyKey: 'tooLarge',
    });
  });

  it('sizes the stage throttle from the capacity model, not a constant', () => {
    const model = capacityModel({ ...DEFAULT_SETTINGS, wafPerKeyPerMinute: 2 * DEFAULT_SETTINGS.rateLimitPerMinute });
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({ ThrottlingRateLimit: model.stageRatePerSecond, ThrottlingBurstLimit: model.stageBurst }),
      ]),
    });
    expect(model.stageRatePerSecond).toBe(
      Math.ceil(DEFAULT_SETTINGS.plannedKeys * (DEFAULT_SETTINGS.rateLimitPerMinute / 60) * 1.5),
    );
    expect(model.handlerConcurrencyNeeded).toBeLessThanOrEqual(model.handlerConcurrencyAvailable);
    expect(model.runawayKeysToFillStage).toBeGreaterThanOrEqual(100);
  });

  it('refuses at synth a plan the Lambdas behind the stage cannot hold', () => {
    expect(() => settingsFromContext(new App({ context: { plannedKeys: '5000' } }).node)).not.toThrow();
    expect(capacityRefusal({ ...DEFAULT_SETTINGS, plannedKeys: 5000 })).toMatch(/concurrent/);
    expect(() => synthStacks({ plannedKeys: 5000 })).toThrow(/plannedKeys 5000/);
  });

  it('alarms on the 4xx share and on any request the shared stage throttle refused', () => {
    const alarms = Object.entries(template.findResources('AWS::CloudWatch::Alarm'));
    const clientErrors = alarms.find(([id]) => id.includes('Api4xxRate'))![1].Properties;
    expect(
      clientErrors.Metrics.map((m: any) => m.MetricStat?.Metric.MetricName)
        .filter(Boolean)
        .sort(),
    ).toEqual(['4XXError', 'Count']);
    const throttled = alarms.find(([id]) => id.includes('StageThrottled'))![1].Properties;
    expect(throttled).toMatchObject({
      Namespace: METRICS_NAMESPACE,
      MetricName: GATEWAY_METRICS.stageThrottled,
      Threshold: 1,
    });
    template.hasResourceProperties('AWS::Logs::MetricFilter', {
      LogGroupName: { Ref: logicalId(api.node.findChild('AccessLogs') as never) },
      FilterPattern: '{ $.error = "THROTTLED" }',
      MetricTransformations: [
        Match.objectLike({ MetricName: GATEWAY_METRICS.stageThrottled, MetricNamespace: METRICS_NAMESPACE }),
      ],
    });
  });

  it('keeps API Gateway execution logs for a month, like the access logs', () => {
    template.hasResourceProperties('AWS::Logs::LogGroup', {
      LogGroupName: { 'Fn::Join': ['', ['API-Gateway-Execution-Logs_', { Ref: logicalId(api.api) }, '/prod']] },
      RetentionInDays: 30,
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { LogGroupName: Match.absent(), RetentionInDays: 30 });
    const stage = Object.values(template.findResources('AWS::ApiGateway::Stage'))[0]!;
    expect(stage.DependsOn).toEqual(expect.arrayContaining([expect.stringMatching(/^ExecutionLogs/)]));
  });
});
