import { Validations, type App } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag 3 runs as a CDK validation plugin: `cdk synth` (and every `app.synth()`) fails with a
 * report on any finding, error or warning, not acknowledged here. The Serverless pack adds the
 * Lambda, SQS and event-source rules AwsSolutions lacks. test/infra/nag.test.ts synthesizes the
 * app afresh with the checks and proves they fail on a resource added to break them.
 */
export function addNagChecks(app: App): void {
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
}

/** The findings this design accepts, each with its reason; docs/deploy.md lists them. */
const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

const RUNTIME_REASON =
  'Node 22 is the runtime the project builds for and tests on (package.json engines, esbuild target); it moves with the project.';

export function acknowledgeFunction(fn: IConstruct): void {
  ack(
    fn,
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
    'The AWS-managed basic execution policy grants only CreateLogGroup/CreateLogStream/PutLogEvents, which every Lambda needs.',
  );
  ack(
    fn,
    'AwsSolutions-IAM5[Resource::*]',
    'xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing) take no resource but *, and neither does ' +
      "dynamodb:ListStreams, which the fan-out's stream event source needs, nor logs:GetQueryResults, which reads the admin's own " +
      'access log query by id (its StartQuery is scoped to the access log group). Table actions are listed per function (table-access.ts).',
  );
  ack(fn, 'AwsSolutions-L1', RUNTIME_REASON);
  ack(fn, 'Serverless-LambdaLatestVersion', RUNTIME_REASON);
  ack(
    fn,
    'Serverless-LambdaDLQ',
    'A function dead-letter queue catches failed asynchronous invocations only, and none is invoked asynchronously: API Gateway ' +
      'and the admin CLI invoke synchronously and see the error; queue and stream sources keep their own failure paths (redrive, on-failure destination).',
  );
}

/** The SQS sources (the signer's, the dead-letter consumer's, the express lane's): SQS mappings take no on-failure destination. */
export function acknowledgeQueueEventSource(fn: IConstruct, whereFailuresGo: string): void {
  ack(
    fn,
    'Serverless-LambdaEventSourceMappingDestination',
    `An SQS event source mapping has no on-failure destination in Lambda; ${whereFailuresGo}`,
  );
}

/**
 * The signer's one wildcard resource beyond `*`: the integrators' destination roles
 * (infra/constructs/webhook-pipeline.ts, destinationRoleStatement). Their accounts are the
 * integrators', unknown when the stack is deployed, so the account is `*`; the name is fixed, and the
 * statement requires an external id of ours and excludes this account.
 */
export function acknowledgeDestinationRoles(fn: IConstruct): void {
  ack(
    fn,
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::*:role/store-events-*]',
    "sts:AssumeRole on the integrators' destination roles (docs/destinations.md): their accounts are not known at deploy " +
      'time, so the account is *, but the role name is fixed (store-events-*), the call must carry an external id of ours ' +
      "(sts:ExternalId sie_*), and this account's own roles are excluded (aws:ResourceAccount). Each role admits the signer " +
      'only through its own trust policy, naming this role and the key’s external id.',
  );
}

/** The name indexer's stream source: a record it gives up on leaves the name pending, which searches still read. */
export function acknowledgeNameIndexEventSource(fn: IConstruct): void {
  ack(
    fn,
    'Serverless-LambdaEventSourceMappingDestination',
    'A stream record the indexer gives up on (after bisecting and 10 retries) leaves its product name pending; every search still ' +
      "reads pending names, so answers stay correct (only dearer), and the function's error alarm fires.",
  );
}

export function acknowledgeRestApi(api: IConstruct, wafEnabled: boolean): void {
  ack(
    api,
    'AwsSolutions-COG4',
    'Clients are store integrations holding API keys; the Lambda authorizer resolves the key on every keyed method (docs/contract.md#keys-and-abilities).',
  );
  ack(
    api,
    'AwsSolutions-APIG2',
    'The handlers validate every request and answer {code,message,field} (docs/errors.md); a gateway validator would answer in another shape.',
  );
  ack(
    api,
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    'The account-level role API Gateway writes execution and access logs with; AWS documents this managed policy for it.',
  );
  if (!wafEnabled)
    ack(
      api,
      'AwsSolutions-APIG3',
      'The web ACL was switched off for this deployment with context waf=false (docs/deploy.md).',
    );
}

/** GET {base}/openapi.json and its other methods: the API's public description. */
export function acknowledgeOpenApiMethod(method: IConstruct): void {
  ack(
    method,
    'AwsSolutions-APIG4',
    'The OpenAPI document is public by design: it holds no tenant data, and integrators read it before they have a key.',
  );
}

export function acknowledgeOAuthMethod(method: IConstruct): void {
  ack(
    method,
    'AwsSolutions-APIG4',
    'The OAuth endpoints are public by design (RFC 8414, RFC 9728, RFC 7591, RFC 6749): they are how a client obtains a ' +
      "token. No grant exists without the store admin's approval through the admin Lambda (docs/oauth.md).",
  );
}

/** The ANY method of a known path: unknown methods, answered 405 with Allow. */
export function acknowledgeMethodNotAllowed(method: IConstruct): void {
  ack(
    method,
    'AwsSolutions-APIG4',
    'ANY catches only the methods a path does not have and answers 405 with Allow from the route table, reading no data; the ' +
      "answer is the same for every caller, so asking for a key first would only turn it into a 401. WAF's per-IP rule bounds it.",
  );
}

export function acknowledgeStreamFailureQueue(queue: IConstruct): void {
  ack(
    queue,
    'AwsSolutions-SQS3',
    'It is a dead-letter queue itself: the on-failure destination of the table stream event source.',
  );
  ack(
    queue,
    'Serverless-SQSRedrivePolicy',
    'It is a dead-letter queue itself: the on-failure destination of the table stream event source.',
  );
}

export function acknowledgeWebhookDeadLetterQueue(queue: IConstruct): void {
  ack(
    queue,
    'Serverless-SQSRedrivePolicy',
    "It is the webhook queue's dead-letter queue; its consumer marks each message's delivery failed.",
  );
}

/** The alarm topic's e-mail subscription's dead-letter queue (infra/constructs/alarm-topic.ts). */
export function acknowledgeAlarmDeadLetterQueue(queue: IConstruct): void {
  const reason =
    "It is a dead-letter queue itself: the alarm topic's e-mail subscription sends it the notifications SNS could not deliver.";
  ack(queue, 'AwsSolutions-SQS3', reason);
  ack(queue, 'Serverless-SQSRedrivePolicy', reason);
}

/** The express lane's queue (infra/constructs/webhook-queues.ts): a shortcut whose failures the table stream covers. */
export function acknowledgeExpressQueue(queue: IConstruct): void {
  const reason =
    'Its messages are a shortcut: each names an order event the table stream delivers anyway, so a message that ' +
    'fails is not retried elsewhere; its consumer never reports one failed, and one older than an hour expires.';
  ack(queue, 'AwsSolutions-SQS3', reason);
  ack(queue, 'Serverless-SQSRedrivePolicy', reason);
}
