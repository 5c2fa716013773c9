import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { GATEWAY_RESPONSES, invalidTokenChallenge } from '#http/gateway-responses.ts';

export interface RateLimitWebAclProps {
  stage: apigw.Stage;
  /** Requests per minute one client IP may send before WAF answers 429. */
  perIpPerMinute: number;
  /** Requests per minute one Authorization header value may send before WAF answers 429. */
  perAuthorizationPerMinute: number;
  /** The protected-resource metadata the 401 names (a CloudFormation token, docs/oauth.md). */
  metadataUrl: string;
}

/**
 * `Bearer <token>` as the authorizer reads it (functions/authorizer/handler.ts, and the token
 * shape of shared/domain/key/api-key.ts `looksLikeToken`): the scheme in any case, then `sia_` (an
 * API key) or `sio_` (an OAuth access token) and 43 base64url characters. WAF's regex has no
 * case-insensitive flag, hence the classes.
 */
export const WELL_FORMED_AUTHORIZATION = '^[Bb][Ee][Aa][Rr][Ee][Rr][ \\t]+si[ao]_[A-Za-z0-9_-]{43}[ \\t]*$';

/**
 * A Content-Length of 4,000,000 bytes or more. Every body reaches the Lambda base64-encoded
 * (the API declares every media type binary), a third larger, and a Lambda request is limited to 6 MB: from about
 * 4.4 MB the invoke itself fails and API Gateway would answer 5xx. The handlers refuse anything
 * over 1 MiB anyway; this rule answers 413 for bodies that could never reach them.
 */
export const TOO_LARGE_CONTENT_LENGTH = '^0*([1-9][0-9]{7,}|[4-9][0-9]{6})$';

/**
 * Sampled requests are off on every rule and on the ACL: a sample shows the request's headers,
 * bearer tokens included, to anyone who may read the web ACL in the console.
 */
const visibility = (metricName: string) => ({
  cloudWatchMetricsEnabled: true,
  sampledRequestsEnabled: false,
  metricName,
});
const none = [{ priority: 0, type: 'NONE' }];
// singleHeader is untyped in CDK and passed through as written: CloudFormation's casing.
const authorization = { singleHeader: { Name: 'authorization' } };

/**
 * The regional web ACL on the stage (on by default; context `waf=false` removes it). In order:
 * 1. a malformed Authorization header is answered 401 without running any Lambda (the
 *    authorizer is of REQUEST type, which has no identity validation expression);
 * 2. a body that cannot reach a Lambda is answered 413;
 * 3. per client IP, a rate limit (anonymous floods, token guessing);
 * 4. per Authorization header value, i.e. per key, a rate limit: a runaway client of one key
 *    cannot use up the stage throttle every tenant shares, nor the Lambdas behind it.
 * Blocked requests get the contract's JSON bodies. docs/deploy.md gives the capacity model.
 */
export class RateLimitWebAcl extends Construct {
  readonly webAcl: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: RateLimitWebAclProps) {
    super(scope, id);
    // CloudFormation refuses an empty ResponseHeaders list: absent when there are none.
    const block = (responseCode: number, customResponseBodyKey: string, headers: Record<string, string>) => {
      const responseHeaders = Object.entries(headers).map(([name, value]) => ({ name, value }));
      return {
        block: {
          customResponse: {
            responseCode,
            customResponseBodyKey,
            ...(responseHeaders.length ? { responseHeaders } : {}),
          },
        },
      };
    };
    const throttled = block(429, 'throttled', { 'Retry-After': '60' });
    const rule = (
      name: string,
      priority: number,
      action: object,
      statement: wafv2.CfnWebACL.StatementProperty,
    ): wafv2.CfnWebACL.RuleProperty => ({
      name,
      priority,
      action,
      statement,
      visibilityConfig: visibility(name),
    });
    const rate = (limit: number, key: Partial<wafv2.CfnWebACL.RateBasedStatementProperty>) => ({
      rateBasedStatement: { limit, evaluationWindowSec: 60, ...key } as wafv2.CfnWebACL.RateBasedStatementProperty,
    });
    const body = (value: object) => ({ contentType: 'APPLICATION_JSON', content: JSON.stringify(value) });
    this.webAcl = new wafv2.CfnWebACL(this, 'WebAcl', {
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility('StoreIntegrationApi'),
      customResponseBodies: {
        throttled: body(GATEWAY_RESPONSES.throttled),
        unauthenticated: body(GATEWAY_RESPONSES.unauthorized),
        tooLarge: body(GATEWAY_RESPONSES.tooLarge),
      },
      rules: [
        rule(
          'MalformedAuthorization',
          0,
          block(401, 'unauthenticated', { 'WWW-Authenticate': invalidTokenChallenge(props.metadataUrl) }),
          {
            andStatement: {
              statements: [
                // Present and not empty: a missing header matches no statement, so NOT alone would catch it too.
                {
                  sizeConstraintStatement: {
                    fieldToMatch: authorization,
                    comparisonOperator: 'GT',
                    size: 0,
                    textTransformations: none,
                  },
                },
                {
                  notStatement: {
                    statement: {
                      regexMatchStatement: {
                        fieldToMatch: authorization,
                        regexString: WELL_FORMED_AUTHORIZATION,
                        textTransformations: none,
                      },
                    },
                  },
                },
              ],
            },
          },
        ),
        rule('BodyTooLarge', 1, block(413, 'tooLarge', {}), {
          regexMatchStatement: {
            fieldToMatch: { singleHeader: { Name: 'content-length' } },
            regexString: TOO_LARGE_CONTENT_LENGTH,
            textTransformations: none,
          },
        }),
        rule('PerIp', 2, throttled, rate(props.perIpPerMinute, { aggregateKeyType: 'IP' })),
        rule(
          'PerAuthorizationHeader',
          3,
          throttled,
          rate(props.perAuthorizationPerMinute, {
            aggregateKeyType: 'CUSTOM_KEYS',
            customKeys: [{ header: { name: 'authorization', textTransformations: none } }],
          }),
        ),
      ],
    });
    new wafv2.CfnWebACLAssociation(this, 'StageAssociation', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAcl.attrArn,
    });
  }
}
