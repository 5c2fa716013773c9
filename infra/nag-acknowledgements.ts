import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * cdk-nag AwsSolutions findings this design accepts, each with its reason. test/infra/nag.test.ts
 * runs the checks and fails on any finding not acknowledged here.
 */
const ack = (scope: IConstruct, id: string, reason: string) => Validations.of(scope).acknowledge({ id, reason });

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
      'dynamodb:ListStreams, which the fan-out\'s stream event source needs. Table actions are listed per function (table-access.ts).',
  );
  ack(
    fn,
    'AwsSolutions-L1',
    'Node 22 is the runtime the project builds for and tests on (package.json engines, esbuild target); it moves with the project.',
  );
}

export function acknowledgeRestApi(api: IConstruct, wafEnabled: boolean): void {
  ack(api, 'AwsSolutions-COG4', 'Clients are store integrations holding API keys; the Lambda authorizer resolves the key on every method (docs/contract.md#keys-and-abilities).');
  ack(
    api,
    'AwsSolutions-APIG2',
    'The handlers validate every request and answer {code,message,field} (CONTRACT); a gateway validator would answer in another shape.',
  );
  ack(
    api,
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    'The account-level role API Gateway writes execution and access logs with; AWS documents this managed policy for it.',
  );
  if (!wafEnabled) ack(api, 'AwsSolutions-APIG3', 'The rate-limiting web ACL is optional (context waf=true, about $7 a month); README, Deploy.');
}

/** GET {base}/openapi.json: the API's public description, answered by API Gateway itself. */
export function acknowledgeOpenApiMethod(method: IConstruct): void {
  ack(method, 'AwsSolutions-APIG4', 'The OpenAPI document is public by design (no data, no Lambda); every other method has the key authorizer.');
}

export function acknowledgeStreamFailureQueue(queue: IConstruct): void {
  ack(queue, 'AwsSolutions-SQS3', 'It is a dead-letter queue itself: the on-failure destination of the table stream event source.');
}
