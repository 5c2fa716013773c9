import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';

/**
 * `keys requests` in AWS (functions/admin/access-log-query.ts): the admin function may start a
 * Logs Insights query on the access log group and read its results, nothing else of the logs.
 * StartQuery is scoped to the group; GetQueryResults names a query id and takes no resource but
 * `*` in IAM, so it can only read queries this role could start.
 */
export function grantAccessLogQuery(fn: lambda.Function, accessLogs: logs.ILogGroup): void {
  fn.addEnvironment('ACCESS_LOG_GROUP', accessLogs.logGroupName);
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['logs:StartQuery'], resources: [accessLogs.logGroupArn] }));
  fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['logs:GetQueryResults'], resources: ['*'] }));
}
