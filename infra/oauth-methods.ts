import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { OAUTH_ROUTES } from '#http/api-routes.ts';
import { ServiceFunction } from './constructs/service-function.ts';
import { acknowledgeOAuthMethod } from './nag-acknowledgements.ts';

/**
 * The OAuth endpoints (docs/oauth.md): one more Lambda group behind the same API (so the stage
 * throttle and the WAF apply), public like {base}/openapi.json: they are how a client gets a
 * token. Their paths start at the stage root, not at the API's base path. GET routes answer HEAD;
 * any other method reaches the function, which answers 405 with Allow.
 */
export function addOAuthMethods(
  scope: Construct,
  api: apigw.RestApi,
  table: dynamodb.ITable,
  environment: Record<string, string>,
): ServiceFunction {
  const fn = new ServiceFunction(scope, 'OAuthFunction', {
    entryPath: 'functions/oauth/handler.ts',
    service: 'oauth',
    description: 'OAuth 2.1 metadata, registration, authorization and token endpoints (public)',
    environment,
  }).bindTable(table, 'oauth');
  const integration = new apigw.LambdaIntegration(fn);
  const open = { authorizationType: apigw.AuthorizationType.NONE };
  for (const route of OAUTH_ROUTES) {
    const resource = api.root.resourceForPath(route.path);
    acknowledgeOAuthMethod(resource.addMethod(route.method, integration, { ...open, operationName: route.operation }));
    if (route.method === 'GET')
      acknowledgeOAuthMethod(
        resource.addMethod('HEAD', integration, { ...open, operationName: `${route.operation}Head` }),
      );
  }
  for (const path of new Set(OAUTH_ROUTES.map((r) => r.path)))
    acknowledgeOAuthMethod(
      api.root.resourceForPath(path).addMethod('ANY', integration, { ...open, operationName: 'methodNotAllowed' }),
    );
  return fn;
}
