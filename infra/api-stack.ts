import * as iam from 'aws-cdk-lib/aws-iam';
import { Aws, CfnOutput, Duration, RemovalPolicy, Size, Stack, type StackProps } from 'aws-cdk-lib';
import { MIN_COMPRESSION_BYTES } from '#http/compression.ts';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import {
  API_BASE_PATH,
  API_ROUTES,
  groups,
  resourceMetadataUrl,
  resourceOf,
  resources,
  type Group,
} from '#http/api-routes.ts';
import { AlarmTopic } from './constructs/alarm-topic.ts';
import { GatewayAlarms } from './constructs/gateway-alarms.ts';
import { capacityModel, capacityRefusal } from './capacity.ts';
import { addGatewayResponses } from './constructs/gateway-responses.ts';
import { ACCESS_LOG_FIELDS } from './access-log-fields.ts';
import { OperationsAlarms } from './constructs/operations-alarms.ts';
import { RateLimitWebAcl } from './constructs/rate-limit-web-acl.ts';
import { ServiceFunction } from './constructs/service-function.ts';
import { WebhookPipeline } from './constructs/webhook-pipeline.ts';
import { NameIndexer } from './constructs/name-indexer.ts';
import { addOpenApiMethod } from './openapi-method.ts';
import { addOAuthMethods } from './oauth-methods.ts';
import { grantAccessLogQuery } from './access-log-query.ts';
import {
  acknowledgeMethodNotAllowed,
  acknowledgeNameIndexEventSource,
  acknowledgeQueueEventSource,
  acknowledgeRestApi,
} from './nag-acknowledgements.ts';
import { authorizerCacheRefusal, DEFAULT_SETTINGS, type DeploySettings } from './settings.ts';
import type { StatefulResources } from './stateful-stack.ts';

const STAGE_NAME = 'prod';

export interface ApiStackProps extends StackProps, Partial<DeploySettings> {
  data: StatefulResources;
  retrySchedule?: readonly number[];
}

/**
 * The stateless part: REST API with the Lambda authorizer on every method, one Lambda per
 * endpoint group (built from the same route table the local gateway uses), the admin Lambda, the
 * webhook pipeline's functions, gateway responses in the contract's shape, JSON access logs,
 * X-Ray tracing, the alarms and their topic, and (optionally) the rate-limiting web ACL.
 */
export class ApiStack extends Stack {
  readonly api: apigw.RestApi;
  readonly authorizerFunction: ServiceFunction;
  readonly functions: Partial<Record<Group, ServiceFunction>> = {};
  readonly adminFunction: ServiceFunction;
  readonly openApiFunction: ServiceFunction;
  readonly oauthFunction: ServiceFunction;
  readonly webhooks: WebhookPipeline;
  readonly nameIndexer: NameIndexer;
  readonly alarmTopic: AlarmTopic;
  readonly webAcl?: RateLimitWebAcl;

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const s = {
      ...DEFAULT_SETTINGS,
      ...props,
      wafPerKeyPerMinute:
        props.wafPerKeyPerMinute ?? 2 * (props.rateLimitPerMinute ?? DEFAULT_SETTINGS.rateLimitPerMinute),
    };
    const refusal = authorizerCacheRefusal(s.authorizerCacheSeconds);
    if (refusal) throw new Error(refusal);
    const capacityRefused = capacityRefusal(s);
    if (capacityRefused) throw new Error(capacityRefused);
    const capacity = capacityModel(s);
    const { table, queues, webhookSecretsKey, webhookSecretsKeyUsers } = props.data;
    if (webhookSecretsKeyUsers !== this.stackName) {
      throw new Error(
        `the webhook secrets key admits roles of stack ${webhookSecretsKeyUsers}, not of ${this.stackName}: pass apiStackName to the stateful stack`,
      );
    }
    const env = { RATE_LIMIT_PER_MINUTE: String(s.rateLimitPerMinute) };

    this.authorizerFunction = new ServiceFunction(this, 'AuthorizerFunction', {
      entryPath: 'functions/authorizer/handler.ts',
      service: 'authorizer',
      description: 'Resolves API keys to store and abilities; takes the rate-limit slot',
      reservedConcurrentExecutions: s.authorizerConcurrency > 0 ? s.authorizerConcurrency : undefined,
      environment: env,
    }).bindTable(table, 'authorizer');

    const authorizer = new apigw.RequestAuthorizer(this, 'KeyAuthorizer', {
      handler: this.authorizerFunction,
      identitySources: [apigw.IdentitySource.header('Authorization')],
      resultsCacheTtl: Duration.seconds(0),
    });

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', { retention: logs.RetentionDays.ONE_MONTH });
    this.api = new apigw.RestApi(this, 'IntegrationApi', {
      description: 'Store integration API v1',
      deployOptions: {
        stageName: STAGE_NAME,
        metricsEnabled: s.detailedMetrics,
        tracingEnabled: true,
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        accessLogDestination: new apigw.LogGroupLogDestination(accessLogs),
        accessLogFormat: apigw.AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
        // The ceiling every tenant shares, sized to hold plannedKeys at their full allowance
        // (infra/capacity.ts); WAF bounds what one key takes of it, the authorizer its allowance.
        throttlingBurstLimit: capacity.stageBurst,
        throttlingRateLimit: capacity.stageRatePerSecond,
      },
      defaultMethodOptions: { authorizer, authorizationType: apigw.AuthorizationType.CUSTOM },
      // The account-wide role API Gateway logs with (one per account and region). Retained on
      // delete: other APIs of the account may log through it.
      cloudWatchRole: true,
      cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN,
      // Every body reaches the Lambda as its bytes (base64): API Gateway would otherwise decode
      // text itself and turn invalid UTF-8 into U+FFFD, which the handler could not tell apart.
      binaryMediaTypes: ['*/*'],
      // Large lists gzipped for clients that accept it (shared/http/compression.ts).
      minCompressionSize: Size.bytes(MIN_COMPRESSION_BYTES),
    });

    for (const group of groups()) {
      this.functions[group] = new ServiceFunction(this, `${group[0]!.toUpperCase()}${group.slice(1)}Function`, {
        entryPath: `functions/${group}/handler.ts`,
        service: group,
        description: `Endpoint group ${group}`,
        environment: env,
      }).bindTable(table, group);
    }
    for (const route of API_ROUTES) {
      const resource = this.api.root.resourceForPath(resourceOf(route));
      const integration = new apigw.LambdaIntegration(this.functions[route.group]!);
      const options = { authorizer, authorizationType: apigw.AuthorizationType.CUSTOM, operationName: route.operation };
      resource.addMethod(route.method, integration, options);
      // HEAD wherever GET works: the same Lambda, which answers without the body.
      if (route.method === 'GET')
        resource.addMethod('HEAD', integration, { ...options, operationName: `${route.operation}Head` });
    }
    // Any other method of a known path reaches the group's Lambda without the authorizer (nothing
    // to authorize, no allowance used) and is answered 405 with Allow; explicit methods win over ANY.
    for (const { resource, group } of resources()) {
      const any = this.api.root
        .resourceForPath(resource)
        .addMethod('ANY', new apigw.LambdaIntegration(this.functions[group]!), {
          authorizationType: apigw.AuthorizationType.NONE,
          operationName: 'methodNotAllowed',
        });
      acknowledgeMethodNotAllowed(any);
    }
    this.openApiFunction = addOpenApiMethod(this, this.api);
    this.oauthFunction = addOAuthMethods(this, this.api, table, env);
    // The API's root as a client sees it (the stage URL), built from the RestApi's id rather than
    // from the stage resource: the deployment the stage points at depends on the gateway responses.
    const metadataUrl = resourceMetadataUrl(
      `https://${this.api.restApiId}.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}/${STAGE_NAME}`,
    );
    addGatewayResponses(this.api, s.rateLimitPerMinute, metadataUrl);
    acknowledgeRestApi(this.api, s.waf);

    this.adminFunction = new ServiceFunction(this, 'AdminFunction', {
      entryPath: 'functions/admin/handler.ts',
      service: 'admin',
      description: 'Admin commands (stores, keys, orders, webhooks); invoked by the admin CLI, never by API Gateway',
      timeout: Duration.seconds(30),
      environment: { WEBHOOK_SECRET_KMS_KEY_ID: webhookSecretsKey.keyArn },
    }).bindTable(table, 'admin');
    // New and rotated webhook secrets are encrypted here. Besides the signer, only `webhooks ping`
    // (an admin command that signs a test event) decrypts them; API functions never can.
    webhookSecretsKey.grant(this.adminFunction, 'kms:Encrypt', 'kms:Decrypt');
    grantAccessLogQuery(this.adminFunction, accessLogs);

    // Events: table stream → fan-out → queue → signer → receivers (docs/contract.md#webhooks).
    // Alarms and operational events (a parked webhook endpoint) go to one topic; alarms are
    // connected to it at the end, once every alarm exists.
    this.alarmTopic = new AlarmTopic(this, 'Alarms', { email: s.alarmEmail });
    this.webhooks = new WebhookPipeline(this, 'Webhooks', {
      table,
      queues,
      secretsKey: webhookSecretsKey,
      retrySchedule: props.retrySchedule,
      signerConcurrency: s.signerConcurrency,
      operationsTopic: this.alarmTopic.topic,
    });

    // `webhooks ping` of an SQS or EventBridge destination: only the signer's role may assume the
    // integrator's role, so the admin asks the signer (functions/webhooks/ping.ts).
    this.adminFunction.addEnvironment('SIGNER_FUNCTION_NAME', this.webhooks.webhooksFunction.functionName);
    // The function itself, no version or alias (grantInvoke would add `<arn>:*`).
    this.adminFunction.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['lambda:InvokeFunction'],
        resources: [this.webhooks.webhooksFunction.functionArn],
      }),
    );

    // Order events first (docs/webhooks.md): the functions that write orders name each order event
    // on the express queue after its commit; the fan-out numbers it at once.
    for (const fn of [this.functions.orders, this.functions.mcp, this.adminFunction]) {
      if (!fn) continue;
      fn.addEnvironment('EXPRESS_QUEUE_URL', queues.expressQueue.queueUrl);
      queues.expressQueue.grantSendMessages(fn);
    }

    // filter[name]'s trigram postings: table stream → name indexer.
    this.nameIndexer = new NameIndexer(this, 'NameIndex', { table });
    acknowledgeQueueEventSource(
      this.webhooks.webhooksFunction,
      "a message failed maxReceiveCount times moves to the dead-letter queue by the queue's redrive policy.",
    );
    acknowledgeQueueEventSource(
      this.webhooks.deadLetterFunction,
      'a dead letter its consumer fails on stays in the dead-letter queue (14 days) and is received again.',
    );
    acknowledgeNameIndexEventSource(this.nameIndexer.function);

    if (s.waf) {
      this.webAcl = new RateLimitWebAcl(this, 'RateLimits', {
        stage: this.api.deploymentStage,
        perIpPerMinute: s.wafPerIpPerMinute,
        perAuthorizationPerMinute: s.wafPerKeyPerMinute,
        metadataUrl,
      });
    }

    // API Gateway creates its execution log group on first use and keeps it forever; created here
    // first, with a retention, before the stage can log.
    const executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${STAGE_NAME}`,
      retention: logs.RetentionDays.ONE_MONTH,
    });
    this.api.deploymentStage.node.addDependency(executionLogs);

    new GatewayAlarms(this, 'Gateway', { api: this.api, accessLogs });
    new OperationsAlarms(this, 'Operations', {
      api: this.api,
      table,
      queues,
      eventsFunction: this.webhooks.eventsFunction,
      functions: [
        { name: 'Authorizer', fn: this.authorizerFunction },
        ...groups().map((g) => ({ name: `${g[0]!.toUpperCase()}${g.slice(1)}`, fn: this.functions[g]! })),
        { name: 'Admin', fn: this.adminFunction },
        { name: 'Events', fn: this.webhooks.eventsFunction },
        { name: 'Signer', fn: this.webhooks.webhooksFunction },
        { name: 'DeadLetter', fn: this.webhooks.deadLetterFunction },
        { name: 'NameIndex', fn: this.nameIndexer.function },
        { name: 'OpenApi', fn: this.openApiFunction },
        { name: 'OAuth', fn: this.oauthFunction },
      ],
    });
    this.alarmTopic.connectAlarms();

    new CfnOutput(this, 'ApiBaseUrl', { value: `${this.api.url.replace(/\/$/, '')}${API_BASE_PATH}` });
    new CfnOutput(this, 'AdminFunctionName', { value: this.adminFunction.functionName });
    new CfnOutput(this, 'WebhookDeadLetterQueueUrl', { value: queues.deadLetterQueue.queueUrl });
    new CfnOutput(this, 'AlarmTopicArn', { value: this.alarmTopic.topic.topicArn });
    // What an integrator's destination role trusts (docs/destinations.md).
    new CfnOutput(this, 'EventDeliveryRoleArn', { value: this.webhooks.webhooksFunction.role!.roleArn });
  }
}
