import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { GATEWAY_RESPONSES } from '../../shared/http/gateway-responses.ts';

export interface RateLimitWebAclProps {
  stage: apigw.Stage;
  /** Requests per minute one client IP may send before WAF answers 429. */
  perIpPerMinute: number;
  /** Requests per minute one Authorization header value may send before WAF answers 429. */
  perAuthorizationPerMinute: number;
}

const visibility = (metricName: string) => ({ cloudWatchMetricsEnabled: true, sampledRequestsEnabled: true, metricName });

/**
 * An optional regional web ACL on the stage (context `waf=true`): two rate-based rules over a
 * one-minute window, one keyed on the client IP (anonymous floods, token guessing) and one on the
 * Authorization header (a runaway client of one key), so a single client cannot use up the stage
 * throttle every tenant shares or the Lambda invocations behind it. Blocked requests get the
 * contract's 429 body. A request without the header counts only towards its IP's rule.
 */
export class RateLimitWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: RateLimitWebAclProps) {
    super(scope, id);
    const block = { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'throttled', responseHeaders: [{ name: 'Retry-After', value: '60' }] } } };
    const rule = (name: string, priority: number, statement: wafv2.CfnWebACL.RateBasedStatementProperty): wafv2.CfnWebACL.RuleProperty => ({
      name,
      priority,
      action: block,
      statement: { rateBasedStatement: statement },
      visibilityConfig: visibility(name),
    });
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('StoreIntegrationApi'),
      customResponseBodies: { throttled: { contentType: 'APPLICATION_JSON', content: JSON.stringify(GATEWAY_RESPONSES.throttled) } },
      rules: [
        rule('PerIp', 0, { limit: props.perIpPerMinute, evaluationWindowSec: 60, aggregateKeyType: 'IP' }),
        rule('PerAuthorizationHeader', 1, {
          limit: props.perAuthorizationPerMinute,
          evaluationWindowSec: 60,
          aggregateKeyType: 'CUSTOM_KEYS',
          customKeys: [{ header: { name: 'authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
        }),
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'StageAssociation', { resourceArn: props.stage.stageArn, webAclArn: this.webAcl.attrArn });
  }
}
