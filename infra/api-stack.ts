import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { API_ROUTES, groups, resourceOf, resources, type Group } from '../shared/http/api-routes.ts';
import { BEARER_CHALLENGE, GATEWAY_RESPONSES } from '../shared/http/gateway-responses.ts';
import { ServiceFunction } from './constructs/service-function.ts';
import { addOpenApiMethod } from './openapi-method.ts';
import { WebhookPipeline } from './constructs/webhook-pipeline.ts';

export interface ApiStackProps extends StackProps {
  table: dynamodb.ITable;
  /** Seconds API Gateway caches an authorizer answer; 0 makes revocation immediate (CONTRACT §3). */
  authorizerCacheSeconds: number;
  rateLimitPerMinute?: number;
}

/** Table access of each endpoint group: reads stay read-only. */
const ACCESS: Record<Group, 'read' | 'readWrite'> = {
  products: 'read',
  catalog: 'readWrite',
  orders: 'readWrite',
  content: 'readWrite',
  // Its tools run the other groups' route functions, writes included.
  mcp: 'readWrite',
};

const template = (body: object) => ({ 'application/json': JSON.stringify(body) });

/**
 * The stateless part: REST API with the Lambda authorizer on every method, one Lambda per
 * endpoint group (built from the same route table the local gateway uses), the admin Lambda,
 * and gateway responses that keep API Gateway's own errors in the contract's shape.
 */
export class ApiStack extends Stack {
  readonly api: apigw.RestApi;
  readonly functions: Partial<Record<Group, ServiceFunction>> = {};
  readonly adminFunction: ServiceFunction;
  readonly webhooks: WebhookPipeline;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const env = { RATE_LIMIT_PER_MINUTE: String(props.rateLimitPerMinute ?? 60) };

    const authorizerFn = new ServiceFunction(this, 'AuthorizerFunction', {
      entryPath: 'functions/authorizer/handler.ts',
      description: 'Resolves API keys to store and abilities; takes the rate-limit slot',
      environment: env,
    }).bindTable(props.table, 'readWrite');

    const authorizer = new apigw.RequestAuthorizer(this, 'KeyAuthorizer', {
      handler: authorizerFn,
      identitySources: [apigw.IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(props.authorizerCacheSeconds),
    });

    this.api = new apigw.RestApi(this, 'IntegrationApi', {
      description: 'Store integration API v1',
      deployOptions: {
        stageName: 'prod',
        metricsEnabled: true,
        // A coarse account-protection ceiling; the per-key limit is enforced by the authorizer.
        throttlingBurstLimit: 200,
        throttlingRateLimit: 100,
      },
      defaultMethodOptions: { authorizer, authorizationType: apigw.AuthorizationType.CUSTOM },
      cloudWatchRole: false,
      // Every body reaches the Lambda as its bytes (base64): API Gateway would otherwise decode
      // text itself and turn invalid UTF-8 into U+FFFD, which the handler could not tell apart.
      binaryMediaTypes: ['*/*'],
    });

    for (const group of groups()) {
      this.functions[group] = new ServiceFunction(this, `${group[0]!.toUpperCase()}${group.slice(1)}Function`, {
        entryPath: `functions/${group}/handler.ts`,
        description: `Endpoint group ${group}`,
        environment: env,
      }).bindTable(props.table, ACCESS[group]);
    }
    for (const route of API_ROUTES) {
      const resource = this.api.root.resourceForPath(resourceOf(route));
      const integration = new apigw.LambdaIntegration(this.functions[route.group]!);
      const options = { authorizer, authorizationType: apigw.AuthorizationType.CUSTOM, operationName: route.operation };
      resource.addMethod(route.method, integration, options);
      // HEAD wherever GET works: the same Lambda, which answers without the body.
      if (route.method === 'GET') resource.addMethod('HEAD', integration, { ...options, operationName: `${route.operation}Head` });
    }
    // Any other method of a known path reaches the group's Lambda without the authorizer (nothing
    // to authorize, no allowance used) and is answered 405 with Allow; explicit methods win over ANY.
    for (const { resource, group } of resources()) {
      this.api.root.resourceForPath(resource).addMethod('ANY', new apigw.LambdaIntegration(this.functions[group]!), {
        authorizationType: apigw.AuthorizationType.NONE,
        operationName: 'methodNotAllowed',
      });
    }

    addOpenApiMethod(this.api);

    const json = { 'Content-Type': "'application/json'" };
    const responses: [string, apigw.ResponseType, string, object, Record<string, string>?][] = [
      // No token at all (a wrong one reaches the handler, which answers with error="invalid_token").
      ['Unauthorized', apigw.ResponseType.UNAUTHORIZED, '401', GATEWAY_RESPONSES.unauthorized, { 'WWW-Authenticate': `'${BEARER_CHALLENGE}'` }],
      ['AccessDenied', apigw.ResponseType.ACCESS_DENIED, '403', GATEWAY_RESPONSES.forbidden('$context.authorizer.missingAbility')],
      // API Gateway answers an unknown route with "Missing Authentication Token" (403): it is a 404.
      ['MissingRoute', apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN, '404', GATEWAY_RESPONSES.notFound],
      ['ResourceNotFound', apigw.ResponseType.RESOURCE_NOT_FOUND, '404', GATEWAY_RESPONSES.notFound],
      ['TooLarge', apigw.ResponseType.REQUEST_TOO_LARGE, '413', GATEWAY_RESPONSES.tooLarge],
      ['Throttled', apigw.ResponseType.THROTTLED, '429', GATEWAY_RESPONSES.throttled, { 'Retry-After': "'1'" }],
      ['AuthorizerFailure', apigw.ResponseType.AUTHORIZER_FAILURE, '500', GATEWAY_RESPONSES.internal],
      ['Default4xx', apigw.ResponseType.DEFAULT_4XX, '400', GATEWAY_RESPONSES.badRequest],
      ['Default5xx', apigw.ResponseType.DEFAULT_5XX, '500', GATEWAY_RESPONSES.internal],
    ];
    for (const [id, type, statusCode, body, headers] of responses) {
      this.api.addGatewayResponse(id, { type, statusCode, templates: template(body), responseHeaders: { ...json, ...headers } });
    }

    this.adminFunction = new ServiceFunction(this, 'AdminFunction', {
      entryPath: 'functions/admin/handler.ts',
      description: 'Admin commands (stores, keys, orders, webhooks); invoked by the admin CLI, never by API Gateway',
      timeout: Duration.seconds(30),
    }).bindTable(props.table, 'readWrite');

    // Order events: table stream → fan-out → queue → signer → receivers (CONTRACT §10).
    this.webhooks = new WebhookPipeline(this, 'Webhooks', { table: props.table });

    new CfnOutput(this, 'ApiBaseUrl', { value: `${this.api.url.replace(/\/$/, '')}/api/v1/integrations` });
    new CfnOutput(this, 'AdminFunctionName', { value: this.adminFunction.functionName });
    new CfnOutput(this, 'WebhookDeadLetterQueueUrl', { value: this.webhooks.deadLetterQueue.queueUrl });
  }
}
